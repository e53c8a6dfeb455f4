import { Worker } from "node:worker_threads";
import { isCatalogCalls, serveCatalogWrites, type Config, type LocalCatalog, type Logger } from "@docstore/shared";

export interface EmbeddedWorker {
  /** Tells the worker new documents are queued; calls in one turn of the event loop coalesce. */
  wake(): void;
  /** Malformed jobs the thread dropped since it started. */
  readonly dropped: number;
  /** Lets the batch in flight finish, then ends the thread. */
  stop(): Promise<void>;
}

/**
 * Starts the worker thread with the parsed configuration; `catalog` (the API thread's) carries
 * out its writes. If the thread dies unexpectedly the process exits, so a supervisor restarts it.
 */
export function startEmbeddedWorker(config: Config, logger: Logger, catalog: LocalCatalog): EmbeddedWorker {
  const thread = new Worker(new URL("./thread.ts", import.meta.url), { workerData: { config } });
  const serve = serveCatalogWrites(thread, catalog);
  let dropped = 0;
  thread.on("message", (message: unknown) => {
    if (isCatalogCalls(message)) serve(message);
    else if (typeof message === "object" && message !== null && "dropped" in message) dropped++;
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
    get dropped() {
      return dropped;
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
