/**
 * The worker process of the distributed mode, and its composition root: consumes BullMQ
 * ingestion jobs with the same pipeline the embedded mode runs in a thread, and serves its
 * metrics. SIGTERM finishes the jobs in flight; jobs not yet taken stay in Redis for the
 * other workers.
 */
import { ConfigError, configOrExit, createLogger, createServices, onShutdown } from "@docstore/shared";
import { runWorker } from "./index.ts";
import { createWorkerMetrics, serveMetrics } from "./metrics.ts";

const config = configOrExit("docstore worker", process.env, (c) => {
  if (c.queue.kind !== "bullmq") {
    throw new ConfigError("QUEUE=bullmq is required for a worker process; in embedded mode (QUEUE=local) the API runs the worker itself");
  }
});
const logger = createLogger(config.logLevel).child({ component: "worker" });
const metrics = createWorkerMetrics();
const services = createServices(config, logger, { role: "worker", dropped: metrics.dropped });
const worker = runWorker(config, services, logger, metrics);
const server = config.worker.metricsPort === 0 ? null : await serveMetrics(metrics, config.worker.metricsPort, config.worker.host);
const address = server?.address();
const metricsAt = address && typeof address === "object" ? `, metrics on port ${address.port}` : "";
logger.info({ concurrency: config.queue.concurrency, metrics: server ? address : null }, "worker started");
process.stdout.write(`docstore worker ready (concurrency ${config.queue.concurrency}${metricsAt})\n`);

onShutdown(logger, config.shutdownTimeoutMs, async () => {
  server?.close();
  await worker.stop();
  await services.close();
});
