/**
 * The embedded mode's worker: a thread of the API process, and a composition root of its own.
 * It receives the API's parsed configuration and builds only what a worker uses; its catalog
 * reads and claims queued documents through its own connection and sends its other writes to
 * the API thread (catalog/rpc.ts), so extraction, chunking and index writes run beside the HTTP
 * event loop, not inside it.
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
const FOREGROUND = getPriority();
const BACKGROUND = Math.min(19, FOREGROUND + 10);
try {
  setPriority(0, BACKGROUND);
} catch (err) {
  logger.warn({ err }, "could not lower the worker thread's priority");
}

// LanceDB does its work on native threads of its own (`lance-cpu`, `tokio-rt-worker`), made by
// whichever thread opened it first and shared by the whole process, searches included. While
// documents are being indexed they get the worker's lower priority, or indexing would take the
// CPU from the HTTP thread during a burst of loads (searches made meanwhile wait with it); once
// the worker has had nothing to do for BUSY_MS they get the process's own priority back, so that
// searches compete for the CPU as equals. Raising a priority needs the right to (root, or
// RLIMIT_NICE); without it they stay lower.
const BUSY_MS = 3_000;
let workedAt = 0;
let mayRaise = true;
const working = () => {
  const idle = Date.now() - workedAt >= BUSY_MS;
  workedAt = Date.now();
  if (idle) prioritizeNativeThreads();
};
function prioritizeNativeThreads() {
  const target = mayRaise && Date.now() - workedAt >= BUSY_MS ? FOREGROUND : BACKGROUND;
  let tasks: string[];
  try {
    tasks = readdirSync("/proc/self/task");
  } catch {
    return; // not Linux: nothing to do
  }
  for (const tid of tasks) {
    try {
      if (!/^(lance-|tokio-rt)/.test(readFileSync(`/proc/self/task/${tid}/comm`, "utf8"))) continue;
      if (getPriority(Number(tid)) !== target) setPriority(Number(tid), target);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EACCES" || code === "EPERM") mayRaise = false; // the thread ended meanwhile otherwise
    }
  }
}

const services = createServices(config, logger, {
  role: "embedded-worker",
  port,
  dropped: (queue) => port.postMessage({ dropped: queue }),
});
const worker = runWorker(config, services, logger, { working });
prioritizeNativeThreads();
const renice = setInterval(prioritizeNativeThreads, 1_000);

port.on("message", (message: unknown) => {
  if (message === "wake") {
    working();
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
