/**
 * The worker process of the distributed mode, and its composition root: consumes BullMQ
 * ingestion jobs with the same pipeline the embedded mode runs in a thread, and serves its
 * metrics, and every RECOVERY_INTERVAL_S queues again the jobs the queue lost (doctor/lost-jobs.ts).
 * SIGTERM finishes the jobs in flight; jobs not yet taken stay in Redis for the other workers.
 */
import {
  claimDataDir,
  ConfigError,
  configOrExit,
  createLogger,
  createServices,
  onShutdown,
  orExit,
  startLostJobRecovery,
} from "@docstore/shared";
import { runWorker } from "./index.ts";
import { createWorkerMetrics, serveMetrics } from "./metrics.ts";

const NAME = "docstore worker";
const config = configOrExit(NAME, process.env, (c) => {
  if (c.queue.kind !== "bullmq") {
    throw new ConfigError("QUEUE=bullmq is required for a worker process; in embedded mode (QUEUE=local) the API runs the worker itself");
  }
});
// Before anything is opened: a DATA_DIR that cannot be used or is an embedded docstore's, or a
// metrics port in use, ends the start with one line and exit code 2. Workers share DATA_DIR.
const dataDir = orExit(NAME, () => claimDataDir(config.dataDir, "shared"));
const metrics = createWorkerMetrics();
const { metricsPort, host } = config.worker;
const server = metricsPort === 0 ? null : await orExit(NAME, () => serveMetrics(metrics, metricsPort, host));
const logger = createLogger(config.logLevel).child({ component: "worker" });
const services = orExit(NAME, () => createServices(config, logger, { role: "worker", dropped: metrics.dropped }));
const worker = runWorker(config, services, logger, { metrics });
// Jobs lost from the queue (Redis restarted empty) are queued again from the catalog.
const { intervalMs, lostAfterMs } = config.recovery;
const recovery =
  intervalMs > 0 ? startLostJobRecovery({ catalog: services.catalog, queue: services.queue, logger }, { intervalMs, lostAfterMs }) : null;
// Before the ready line, which is when a supervisor may start sending signals.
onShutdown(logger, config.shutdownTimeoutMs, async () => {
  server?.close();
  await recovery?.stop();
  await worker.stop();
  await services.close();
  dataDir.release();
});

const address = server?.address();
const metricsAt = address && typeof address === "object" ? `, metrics on port ${address.port}` : "";
logger.info({ concurrency: config.queue.concurrency, metrics: server ? address : null }, "worker started");
process.stdout.write(`docstore worker ready (concurrency ${config.queue.concurrency}${metricsAt})\n`);
