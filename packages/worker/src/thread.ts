/**
 * The embedded mode's worker: a thread of the API process, and a composition root of its own.
 * It receives the API's parsed configuration and builds only what a worker uses; its catalog
 * reads through its own connection and sends every write to the API thread (catalog/rpc.ts),
 * so extraction, chunking and index writes run beside the HTTP event loop, not inside it.
 */
import { parentPort, workerData } from "node:worker_threads";
import { getPriority, setPriority } from "node:os";
import { readFileSync, readdirSync } from "node:fs";
import { createLogger, createServices, type Config } from "@docstore/shared";
import { runWorker } from "./index.ts";

const port = parentPort!;
const { config } = workerData as { config: Config };
const logger = createLogger(config.logLevel).child({ component: "worker" });

// Indexing is background work: on Linux the nice value belongs to the calling thread, so this
// lowers only the worker's priority. Under load the HTTP thread keeps the CPU and the durable
// queue absorbs the burst; when requests quieten, the worker has the CPU again. Ten steps below
// the process's own priority, whatever that is.
const BACKGROUND = Math.min(19, getPriority() + 10);
try {
  setPriority(0, BACKGROUND);
} catch (err) {
  logger.warn({ err }, "could not lower the worker thread's priority");
}

// LanceDB does its work on native threads of its own (`lance-cpu`, `tokio-rt-worker`), made
// by whichever thread opened it first and shared by the whole process: they get the same lower
// priority, or indexing would take the CPU from the HTTP thread during a burst of loads. (Its
// searches run there too: under such a burst they wait for the HTTP thread, as indexing does.)
const lowerNativeThreads = () => {
  let tasks: string[];
  try {
    tasks = readdirSync("/proc/self/task");
  } catch {
    return; // not Linux: nothing to do
  }
  for (const tid of tasks) {
    try {
      if (!/^(lance-|tokio-rt)/.test(readFileSync(`/proc/self/task/${tid}/comm`, "utf8"))) continue;
      if (getPriority(Number(tid)) < BACKGROUND) setPriority(Number(tid), BACKGROUND);
    } catch {
      // the thread ended meanwhile
    }
  }
};

const services = createServices(config, logger, {
  role: "embedded-worker",
  port,
  dropped: (queue) => port.postMessage({ dropped: queue }),
});
const worker = runWorker(config, services, logger);
lowerNativeThreads();
const renice = setInterval(lowerNativeThreads, 5_000);

port.on("message", (message: unknown) => {
  if (message === "wake") {
    services.queue.wake();
  } else if (message === "stop") {
    void (async () => {
      clearInterval(renice);
      await worker.stop();
      await services.close();
      port.postMessage("stopped");
      port.close();
    })();
  }
});
