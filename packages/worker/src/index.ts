import type { JobQueue } from "@docstore/shared";
import { ingestBatch, type PipelineDeps } from "./pipeline.ts";

export { ingestBatch, type PipelineDeps } from "./pipeline.ts";
export { startEmbeddedWorker, type EmbeddedWorker } from "./embedded.ts";
export { createExtractor } from "./extractor.ts";

/** Consumes ingestion jobs from any queue adapter with the ingestion pipeline. */
export function startWorker(queue: JobQueue, deps: PipelineDeps): { stop(): Promise<void> } {
  queue.start((jobs, attempt) => ingestBatch(jobs, deps, attempt));
  return { stop: () => queue.stop() };
}
