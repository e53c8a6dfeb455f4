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
