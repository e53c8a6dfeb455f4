import type { IngestJob, JobQueue } from "../ports.ts";
import type { SqliteCatalog } from "../sqlite/catalog.ts";
import type { Logger } from "../logger.ts";

/**
 * The embedded mode's queue: the catalog's documents table is the queue, so whatever was
 * accepted survives a crash. `enqueue` only wakes the consumer; `start` first re-queues what
 * a dead process left in `processing`.
 */
export class LocalQueue implements JobQueue {
  readonly #catalog: SqliteCatalog;
  readonly #logger: Logger;
  readonly #batchSize: number;
  #wake: (() => void) | null = null;
  #running = false;
  #loop: Promise<void> | null = null;

  constructor(catalog: SqliteCatalog, logger: Logger, batchSize = 64) {
    this.#catalog = catalog;
    this.#logger = logger;
    this.#batchSize = batchSize;
  }

  async enqueue(_job: IngestJob): Promise<void> {
    this.#wake?.();
  }

  start(handler: (jobs: IngestJob[]) => Promise<void>): void {
    if (this.#running) throw new Error("queue already started");
    this.#running = true;
    const requeued = this.#catalog.requeueProcessing();
    if (requeued > 0) this.#logger.info({ requeued }, "re-queued documents left in processing");
    this.#loop = this.#consume(handler);
  }

  async #consume(handler: (jobs: IngestJob[]) => Promise<void>): Promise<void> {
    while (this.#running) {
      const jobs = this.#catalog.claimQueued(this.#batchSize);
      if (jobs.length === 0) {
        // Sleep until a new job arrives; the timeout also picks up rows other processes add.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 1000);
          this.#wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.#wake = null;
        continue;
      }
      try {
        await handler(jobs);
      } catch (err) {
        this.#logger.error({ err, jobs: jobs.length }, "ingestion batch failed; re-queueing");
        this.#catalog.requeueProcessing();
        await new Promise((r) => setTimeout(r, 1000));
      }
      // Let HTTP requests in between batches.
      await new Promise((r) => setImmediate(r));
    }
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    await this.#loop;
  }

  async ping(): Promise<void> {
    await this.#catalog.ping();
  }
}
