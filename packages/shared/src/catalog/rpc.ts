/**
 * The embedded worker thread reads the catalog through its own connection but sends every
 * write to the API thread, which owns them. Two threads writing one SQLite file would make the
 * HTTP thread sleep in SQLite's busy handler whenever the worker held the write lock.
 */
import type { MessagePort, Worker } from "node:worker_threads";
import type { Catalog } from "../ports.ts";
import type { QueueTable } from "../queue/local.ts";

/** A catalog that also serves as the embedded mode's queue (SqliteCatalog, or this proxy to it). */
export type LocalCatalog = Catalog & QueueTable;

const WRITES = ["accept", "rollback", "markProcessing", "markReady", "markFailed", "markQueued", "delete", "deleteCollection", "claimQueued", "requeueProcessing", "release"] as const;
type Write = (typeof WRITES)[number];

interface Call {
  rpc: number;
  method: Write;
  args: unknown[];
}

interface Reply {
  rpc: number;
  result?: unknown;
  error?: string;
}

export const isCall = (m: unknown): m is Call => typeof m === "object" && m !== null && "rpc" in m && "method" in m;

/** API thread: runs the worker's catalog writes on the owning connection. */
export function serveCatalogWrites(thread: Worker, catalog: LocalCatalog): (message: Call) => void {
  return (message) => {
    const { rpc, method, args } = message;
    if (!WRITES.includes(method)) {
      thread.postMessage({ rpc, error: `not a catalog write: ${String(method)}` } satisfies Reply);
      return;
    }
    Promise.resolve()
      .then(() => (catalog[method] as (...a: unknown[]) => unknown)(...args))
      .then(
        (result) => thread.postMessage({ rpc, result } satisfies Reply),
        (err: unknown) => thread.postMessage({ rpc, error: err instanceof Error ? err.message : String(err) } satisfies Reply),
      );
  };
}

/** Worker thread: the catalog with reads local and writes sent to the API thread. */
export function remoteWritesCatalog(port: MessagePort, local: Catalog): LocalCatalog {
  let next = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  port.on("message", (m: Reply) => {
    if (typeof m !== "object" || m === null || !("rpc" in m)) return;
    const w = waiting.get(m.rpc);
    if (!w) return;
    waiting.delete(m.rpc);
    if (m.error !== undefined) w.reject(new Error(m.error));
    else w.resolve(m.result);
  });
  const call = <T>(method: Write, ...args: unknown[]) =>
    new Promise<T>((resolve, reject) => {
      const rpc = next++;
      waiting.set(rpc, { resolve: resolve as (v: unknown) => void, reject });
      port.postMessage({ rpc, method, args } satisfies Call);
    });
  return {
    get: (c, d) => local.get(c, d),
    collectionExists: (c) => local.collectionExists(c),
    listCollections: () => local.listCollections(),
    metadataFields: (c) => local.metadataFields(c),
    listDocuments: (c, l, cur) => local.listDocuments(c, l, cur),
    listPending: (b, l, cur) => local.listPending(b, l, cur),
    ping: () => local.ping(),
    close: () => local.close(),
    accept: (doc) => call("accept", doc),
    rollback: (record, previous) => call("rollback", record, previous),
    markProcessing: (c, d, v) => call("markProcessing", c, d, v),
    markReady: (c, d, v, n) => call("markReady", c, d, v, n),
    markFailed: (c, d, v, e) => call("markFailed", c, d, v, e),
    markQueued: (c, d, v) => call("markQueued", c, d, v),
    delete: (c, d) => call("delete", c, d),
    deleteCollection: (c) => call("deleteCollection", c),
    claimQueued: (limit, maxBytes) => call<unknown[]>("claimQueued", limit, maxBytes),
    requeueProcessing: () => call<number>("requeueProcessing"),
    release: (jobs) => call<void>("release", jobs),
  };
}
