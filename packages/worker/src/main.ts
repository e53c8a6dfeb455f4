/**
 * The worker process of the distributed mode: consumes BullMQ ingestion jobs with the same
 * pipeline the embedded mode runs in a thread. SIGTERM finishes the jobs in flight; jobs not
 * yet taken stay in Redis for the other workers.
 */
import { ConfigError, createLogger, createServices, loadConfig } from "@docstore/shared";
import { runWorker } from "./index.ts";

function configOrExit() {
  try {
    const config = loadConfig(process.env);
    if (config.queue.kind !== "bullmq") {
      throw new ConfigError("QUEUE=bullmq is required for a worker process; in embedded mode (QUEUE=local) the API runs the worker itself");
    }
    return config;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`docstore worker: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

const config = configOrExit();
const logger = createLogger(config.logLevel).child({ component: "worker" });
const services = createServices(config, logger);
const worker = runWorker(config, services, logger);
logger.info({ concurrency: config.queue.concurrency }, "worker started");
process.stdout.write(`docstore worker ready (concurrency ${config.queue.concurrency})\n`);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "worker shutting down");
  const force = setTimeout(() => {
    logger.error("worker shutdown timed out");
    process.exit(1);
  }, config.shutdownTimeoutMs);
  force.unref();
  await worker.stop();
  await services.close();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
