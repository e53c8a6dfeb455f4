/**
 * The embedded worker thread reads the catalog through its own connection but sends its
 * writes to the API thread, which owns them: the HTTP thread sleeps in SQLite's busy handler
 * whenever another connection holds the write lock. The queue's claims are the exception
 * (compose.ts): they are written on the worker's connection, as the HTTP thread loses less
 * waiting for one than doing it.
 */
import type { MessagePort, Worker } from "node:worker_threads";
import type { Catalog } from "../ports.ts";
import type { QueueTable } from "../queue/local.ts";
import { fromWire, toWire, type WireError } from "../errors-wire.ts";

/** A catalog that also serves as the embedded mode's queue (SqliteCatalog). */
export type LocalCatalog = Catalog & QueueTable;

const WRITES = ["accept", "rollback", "markProcessing", "markReady", "markFailed", "markQueued", "delete", "deleteCollection"] as const;
type Write = (typeof WRITES)[number];

interface Call {
  rpc: number;
  method: Write;
  args: unknown[];
}

/** The calls made in one turn of the worker's event loop (a batch's markReady, say): one message. */
interface Calls {
  calls: Call[];
}

interface Reply {
  rpc: number;
  result?: unknown;
  /** What the write threw, rebuilt as the same error class on the worker's side. */
  error?: WireError;
}

interface Replies {
  replies: Reply[];
}

export const isCatalogCalls = (m: unknown): m is Calls => typeof m === "object" && m !== null && "calls" in m && Array.isArray(m.calls);

/**
 * The most calls run in one turn of the API thread's event loop (one transaction: GroupCommit).
 * A maintenance run that folds in a large load resolves the marks of every batch that waited on
 * it at once, tens of thousands of `markReady` calls in one message; run in one turn, they held
 * the HTTP thread for most of a second (docs/benchmarks.md). About 12 ms a slice.
 */
export const CALLS_PER_TURN = 1_000;

/**
 * API thread: runs the worker's catalog writes on the owning connection, in the order they were
 * sent, at most CALLS_PER_TURN in a turn; one reply message for each slice of a message.
 */
export function serveCatalogWrites(
  thread: Pick<Worker, "postMessage">,
  catalog: Catalog,
  callsPerTurn = CALLS_PER_TURN,
): (message: Calls) => void {
  const run = ({ rpc, method, args }: Call): Promise<Reply> => {
    if (!WRITES.includes(method)) return Promise.resolve({ rpc, error: toWire(new Error(`not a catalog write: ${String(method)}`)) });
    return Promise.resolve()
      .then(() => (catalog[method] as (...a: unknown[]) => unknown)(...args))
      .then(
        (result) => ({ rpc, result }),
        (err: unknown) => ({ rpc, error: toWire(err) }),
      );
  };
  /**
   * Runs the calls and replies; never rejects, so the slices after it run. A reply that cannot
   * be cloned fails its calls; one that cannot be sent at all (the thread gone) is dropped.
   */
  const slice = async (calls: Call[]) => {
    const replies = await Promise.all(calls.map(run));
    try {
      thread.postMessage({ replies } satisfies Replies);
    } catch (err) {
      try {
        thread.postMessage({ replies: calls.map(({ rpc }) => ({ rpc, error: toWire(err) })) } satisfies Replies);
      } catch {
        // Nobody to answer.
      }
    }
  };
  const idle = Promise.resolve();
  /** Settles once every slice received so far has run: each slice starts after the one before. */
  let queue = idle;
  return ({ calls }) => {
    for (let i = 0; i < calls.length; i += callsPerTurn) {
      const part = calls.slice(i, i + callsPerTurn);
      // The common case, a single slice with none before it, starts in this turn.
      const done = queue === idle ? slice(part) : queue.then(() => slice(part));
      queue = done;
      void done.then(() => {
        if (queue === done) queue = idle;
      });
    }
  };
}

/** Worker thread: the catalog with reads local and writes sent to the API thread. */
export function remoteWritesCatalog(port: MessagePort, local: Catalog): Catalog {
  let next = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  port.on("message", (m: unknown) => {
    if (typeof m !== "object" || m === null || !("replies" in m)) return;
    for (const r of (m as Replies).replies) {
      const w = waiting.get(r.rpc);
      if (!w) continue;
      waiting.delete(r.rpc);
      if (r.error !== undefined) w.reject(fromWire(r.error));
      else w.resolve(r.result);
    }
  });
  let unsent: Call[] = [];
  const send = () => {
    const calls = unsent;
    unsent = [];
    try {
      port.postMessage({ calls } satisfies Calls);
    } catch (err) {
      // Arguments that cannot be cloned: the calls fail, as a single call's postMessage would.
      for (const { rpc } of calls) {
        waiting.get(rpc)?.reject(err as Error);
        waiting.delete(rpc);
      }
    }
  };
  const call = <T>(method: Write, ...args: unknown[]) =>
    new Promise<T>((resolve, reject) => {
      const rpc = next++;
      waiting.set(rpc, { resolve: resolve as (v: unknown) => void, reject });
      if (unsent.length === 0) queueMicrotask(send);
      unsent.push({ rpc, method, args });
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
  };
}
