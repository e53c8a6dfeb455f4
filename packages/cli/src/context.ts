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

/** Rows as aligned columns, the header first. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n");
}

/**
 * For a request refused (status 401) for want of a token when none was given: where a token comes from. A
 * service started without API_TOKENS (packages/api/src/main.ts) generated one, printed it on
 * its ready line and keeps it in DATA_DIR/api-token.
 */
export function tokenHint(ctx: Context, status: number | undefined): string | undefined {
  if (ctx.token || status !== 401) return undefined;
  return (
    "no token given: set DOCSTORE_TOKEN or pass --token. A local (embedded) service started without API_TOKENS " +
    "prints its token when it starts (\"docstore ready at … token ds_…\") and keeps it in DATA_DIR/api-token " +
    "(by default ./data/api-token in the folder the service was started from)"
  );
}
