import { DocstoreClient, type RetryInfo } from "@docstore/client";

/** What every command gets from main.ts: where the service is, how to talk to it, where to write. */
export interface Context {
  url: string;
  token: string | undefined;
  /** Machine output: JSON on stdout, JSON lines for lists and progress. */
  json: boolean;
  retries: number;
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  /** Runs `say` on the first Ctrl-C (SIGINT), then exits with code 130 as the signal would have. */
  onInterrupt?: (say: () => void) => void;
}

export function clientOf(ctx: Context, onRetry?: (info: RetryInfo) => void): DocstoreClient {
  return new DocstoreClient({ url: ctx.url, token: ctx.token, retry: { attempts: ctx.retries + 1 }, onRetry });
}

export const print = (ctx: Context, line: string) => ctx.stdout.write(`${line}\n`);
export const printJson = (ctx: Context, value: unknown) => ctx.stdout.write(`${JSON.stringify(value)}\n`);

/**
 * Rows as aligned columns, the header first. With `fit`, the columns it names (by index) are
 * narrowed, widest first, and their cells cut with "…", until each line fits in `fit.width`.
 */
export function table(header: string[], rows: (string | number)[][], fit?: { width: number; shrink: number[] }): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  if (fit) {
    const min = (i: number) => Math.max(header[i]!.length, 8);
    for (let over = widths.reduce((a, b) => a + b, 2 * (widths.length - 1)) - fit.width; over > 0; over--) {
      const i = fit.shrink.filter((j) => widths[j]! > min(j)).sort((a, b) => widths[b]! - widths[a]!)[0];
      if (i === undefined) break;
      widths[i]!--;
    }
  }
  const cut = (c: string, i: number) => (c.length > widths[i]! ? `${c.slice(0, widths[i]! - 1)}…` : c);
  return cells
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? cut(c, i) : cut(c, i).padEnd(widths[i]!)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** Columns for tables: the terminal's, else 100. */
export const columns = (ctx: Context) => (ctx.stdout.isTTY && ctx.stdout.columns > 0 ? ctx.stdout.columns : 100);

/**
 * For a request refused (status 401) for want of a token when none was given: where a token comes from. A
 * service started without API_TOKENS (packages/api/src/main.ts) generated one, printed it on
 * its ready line and keeps it in DATA_DIR/api-token.
 */
export function tokenHint(ctx: Context, status: number | undefined): string | undefined {
  if (ctx.token || status !== 401) return undefined;
  return (
    "no token given: set DOCSTORE_TOKEN or pass --token. A local (embedded) service started without API_TOKENS " +
    'prints its token when it starts ("docstore ready at … token ds_…") and keeps it in DATA_DIR/api-token ' +
    "(by default ./data/api-token in the folder the service was started from)"
  );
}
