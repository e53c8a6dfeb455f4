import { createChunker, type Config, type JobHandlers, type Logger, type WorkerServices } from "@docstore/shared";
import { ingestBatch, type PipelineDeps } from "./pipeline.ts";
import { createExtractor } from "./extractor.ts";
import { ReadyMarks } from "./ready-marks.ts";
import type { WorkerMetrics } from "./metrics.ts";

export { startEmbeddedWorker, type EmbeddedWorker } from "./embedded.ts";

/**
 * Consumes the role's queue with the ingestion pipeline and its own extraction sandbox. The
 * worker process and the embedded worker thread both run exactly this.
 */
export function runWorker(
  config: Config,
  services: WorkerServices,
  logger: Logger,
  hooks: { metrics?: WorkerMetrics /** Called as each batch starts and ends. */; working?: () => void } = {},
): { stop(): Promise<void> } {
  const { metrics, working } = hooks;
  const extractor = createExtractor(config);
  const chunker = createChunker(config.ingest, config.ingest.threads);
  const deps: PipelineDeps = {
    catalog: services.catalog,
    blobs: services.blobs,
    index: services.index,
    embedder: services.embedder,
    extractor,
    logger,
    chunker,
    // The embedded worker only: a worker process's jobs are done once its batch returns, and a
    // document left processing past RECOVERY_INTERVAL_S would be queued again (doctor/lost-jobs.ts).
    readyMarks: config.queue.kind === "local" ? new ReadyMarks(logger) : undefined,
  };
  const handlers: JobHandlers = {
    ingest: async (jobs, attempt) => {
      working?.();
      try {
        await ingestBatch(jobs, deps, attempt);
        working?.();
        metrics?.handled("ingest", jobs.length, "done");
      } catch (err) {
        metrics?.handled("ingest", jobs.length, "retry");
        throw err;
      }
    },
  };
  services.queue.start(handlers);
  return {
    async stop() {
      await services.queue.stop();
      await deps.readyMarks?.flush();
      await extractor.close();
      await chunker.close();
    },
  };
}
