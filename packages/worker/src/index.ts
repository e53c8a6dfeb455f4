import type { Catalog, Config, JobQueue, Logger, Services } from "@docstore/shared";
import { ingestBatch, type PipelineDeps } from "./pipeline.ts";
import { createExtractor } from "./extractor.ts";

export { ingestBatch, type PipelineDeps } from "./pipeline.ts";
export { startEmbeddedWorker, type EmbeddedWorker } from "./embedded.ts";
export { createExtractor } from "./extractor.ts";

/** Consumes ingestion jobs from any queue adapter with the ingestion pipeline. */
export function startWorker(queue: JobQueue, deps: PipelineDeps): { stop(): Promise<void> } {
  queue.start((jobs, attempt) => ingestBatch(jobs, deps, attempt));
  return { stop: () => queue.stop() };
}

/**
 * A worker over the configured services, with its own extraction sandbox. The embedded
 * thread passes its own queue and a catalog whose writes go to the API thread.
 */
export function runWorker(
  config: Config,
  services: Services,
  logger: Logger,
  own: { queue?: JobQueue; catalog?: Catalog } = {},
): { stop(): Promise<void> } {
  const extractor = createExtractor(config);
  const worker = startWorker(own.queue ?? services.queue, {
    catalog: own.catalog ?? services.catalog,
    blobs: services.blobs,
    index: services.index,
    embedder: services.embedder,
    extractor,
    logger,
    chunking: config.ingest,
  });
  return {
    async stop() {
      await worker.stop();
      await extractor.close();
    },
  };
}
