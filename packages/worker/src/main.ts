/**
 * The worker process of the distributed mode: consumes BullMQ ingestion jobs with the same
 * pipeline the embedded mode runs in a thread. SIGTERM finishes the jobs in flight; jobs not
 * yet taken stay in Redis for the other workers.
 */
import { ConfigError, configOrExit, createLogger, createServices, onShutdown } from "@docstore/shared";
import { runWorker } from "./index.ts";

const config = configOrExit("docstore worker", process.env, (c) => {
  if (c.queue.kind !== "bullmq") {
    throw new ConfigError("QUEUE=bullmq is required for a worker process; in embedded mode (QUEUE=local) the API runs the worker itself");
  }
});
const logger = createLogger(config.logLevel).child({ component: "worker" });
const services = createServices(config, logger);
const worker = runWorker(config, services, logger);
logger.info({ concurrency: config.queue.concurrency }, "worker started");
process.stdout.write(`docstore worker ready (concurrency ${config.queue.concurrency})\n`);

onShutdown(logger, config.shutdownTimeoutMs, async () => {
  await worker.stop();
  await services.close();
});
