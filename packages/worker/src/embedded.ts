import { Worker } from "node:worker_threads";
import type { Env, Logger, SqliteCatalog } from "@docstore/shared";
import { isCall, serveCatalogWrites } from "./catalog-rpc.ts";

export interface EmbeddedWorker {
  /** Tells the worker new documents are queued; calls in one turn of the event loop coalesce. */
  wake(): void;
  /** Lets the batch in flight finish, then ends the thread. */
  stop(): Promise<void>;
}

/** Starts the worker thread. If it dies unexpectedly the process exits, so a supervisor restarts it. */
export function startEmbeddedWorker(env: Env, logger: Logger, catalog: SqliteCatalog): EmbeddedWorker {
  const thread = new Worker(new URL("./thread.ts", import.meta.url), { workerData: { env } });
  const serve = serveCatalogWrites(thread, catalog);
  thread.on("message", (message: unknown) => {
    if (isCall(message)) serve(message);
  });
  let stopping = false;
  let wakePending = false;
  thread.on("error", (err) => {
    logger.fatal({ err }, "worker thread failed");
    process.exit(1);
  });
  thread.on("exit", (code) => {
    if (stopping) return;
    logger.fatal({ code }, "worker thread exited");
    process.exit(1);
  });
  return {
    wake() {
      if (wakePending || stopping) return;
      wakePending = true;
      setImmediate(() => {
        wakePending = false;
        thread.postMessage("wake");
      });
    },
    async stop() {
      if (stopping) return;
      stopping = true;
      const exited = new Promise<void>((resolve) => thread.once("exit", () => resolve()));
      thread.postMessage("stop");
      await exited;
    },
  };
}
