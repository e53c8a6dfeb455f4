/**
 * The embedded mode's worker: a thread of the API process, and a composition root of its own.
 * It receives the API's parsed configuration and builds only what a worker uses; its catalog
 * reads through its own connection and sends every write to the API thread (catalog/rpc.ts),
 * so extraction, chunking and index writes run beside the HTTP event loop, not inside it.
 */
import { parentPort, workerData } from "node:worker_threads";
import { setPriority } from "node:os";
import { createLogger, createServices, type Config } from "@docstore/shared";
import { runWorker } from "./index.ts";

const port = parentPort!;
const { config } = workerData as { config: Config };
const logger = createLogger(config.logLevel).child({ component: "worker" });

// Indexing is background work: on Linux the nice value belongs to the calling thread, so this
// lowers only the worker's priority. Under load the HTTP thread keeps the CPU and the durable
// queue absorbs the burst; when requests quieten, the worker has the CPU again.
try {
  setPriority(0, 10);
} catch (err) {
  logger.warn({ err }, "could not lower the worker thread's priority");
}

const services = createServices(config, logger, {
  role: "embedded-worker",
  port,
  dropped: (queue) => port.postMessage({ dropped: queue }),
});
const worker = runWorker(config, services, logger);

port.on("message", (message: unknown) => {
  if (message === "wake") {
    services.queue.wake();
  } else if (message === "stop") {
    void (async () => {
      await worker.stop();
      await services.close();
      port.postMessage("stopped");
      port.close();
    })();
  }
});
