/**
 * What the CLI tests (cli-load.test.ts, cli-commands.test.ts) share: one embedded service
 * behind a fault proxy that records and can hold or refuse requests, a client straight to the
 * service, a scratch folder, and the CLI run against them. Each test file gets its own.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import { DocstoreClient } from "@docstore/client";
import { runCli, type CliResult } from "./cli-run.ts";
import { startFaultProxy, type FaultProxy, type Seen } from "./fault-proxy.ts";
import { removeDir, startService, type Service } from "./harness.ts";

export const ROOT = path.resolve(import.meta.dirname, "..");
export let svc: Service;
export let proxy: FaultProxy;
export let client: DocstoreClient;
export let work: string;

/** Starts the service, the proxy and the scratch folder around the tests of the calling file. */
export function cliAround() {
  beforeAll(async () => {
    svc = await startService();
    proxy = await startFaultProxy(svc.url);
    client = new DocstoreClient({ url: svc.url, token: svc.token });
    work = mkdtempSync(path.join(tmpdir(), "docstore-cli-"));
  }, 60_000);

  afterAll(async () => {
    await proxy.close();
    expect(await svc.stop()).toBe(0);
    removeDir(svc.dataDir);
    removeDir(work);
  });

  beforeEach(() => proxy.reset());
}

export const env = (extra: Record<string, string> = {}) => ({
  DOCSTORE_URL: proxy.url,
  DOCSTORE_TOKEN: svc.token,
  XDG_STATE_HOME: path.join(work, "state"),
  ...extra,
});
export const cli = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) =>
  runCli(args, { cwd: work, env: env(opts.env), input: opts.input });
export const loadsIn = (seen: Seen[]) => seen.filter((s) => s.method === "POST" && s.path.startsWith("/load_"));
/** Documents the requests carried: a bulk request's list, one for any other load. */
export const documentsIn = (seen: Seen[]) =>
  loadsIn(seen).reduce((n, s) => n + (s.path === "/load_texts_to_collection" ? s.json.documents.length : 1), 0);
export const ok = (r: CliResult) => expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);

export async function documents(collection: string) {
  const all = [];
  for await (const d of client.documents(collection)) all.push(d);
  return all;
}

export function writeJsonl(name: string, lines: unknown[]): string {
  const file = path.join(work, name);
  writeFileSync(file, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n");
  return file;
}
