import { setTimeout as sleep } from "node:timers/promises";
import type { ClaimedJob, JobQueue } from "../ports.ts";
import type { Logger } from "../logger.ts";
import { parseJob, type DroppedJob, type IngestJob, type JobHandlers } from "../domain/jobs.ts";

/** The part of the catalog that serves as the queue (SqliteCatalog, or a proxy to it). */
export interface QueueTable {
  /**
   * Marks up to `limit` queued documents as processing and returns their jobs, unvalidated:
   * no more than `maxBytes` of raw contents together, unless the first document alone is larger.
   * A job may carry its document's record as the claim left it (`record`); it is kept when it
   * is the record of the job's version.
   */
  claimQueued(limit: number, maxBytes?: number): unknown[] | Promise<unknown[]>;
  requeueProcessing(): number | Promise<number>;
  /** Puts claimed jobs back in the queue (a stop, or a batch that failed as a whole). */
  release(jobs: IngestJob[]): void | Promise<void>;
  ping(): Promise<void>;
}

const PAUSE_MS = 1000;
const PAUSE_MAX_MS = 8000;

/**
 * The embedded mode's queue: the catalog's documents table is the queue, so whatever was
 * accepted survives a crash. `enqueue` only wakes the consumer (here, or through `notify` in
 * the thread that consumes); `start` first re-queues what a dead process left in `processing`.
 * A batch that fails goes back to the queue and is tried again after a pause, without end:
 * while DATA_DIR is full, documents wait in the queue, and are indexed once space returns. The
 * consumer itself outlives any failure (of the catalog's claims and releases too).
 */
export class LocalQueue implements JobQueue {
  readonly #catalog: QueueTable;
  readonly #logger: Logger;
  readonly #batchSize: number;
  readonly #batchBytes: number | undefined;
  readonly #inFlight: number;
  readonly #notify: (() => void) | undefined;
  readonly #dropped: DroppedJob;
  #wake: (() => void) | null = null;
  #running = false;
  #loop: Promise<void> | null = null;
  readonly #stopping = new AbortController();
  /** Failures in a row (batches, claims, releases), for the pause after the next one. */
  #failures = 0;

  constructor(
    catalog: QueueTable,
    logger: Logger,
    options: { batchSize?: number; batchBytes?: number; inFlight?: number; notify?: (() => void) | undefined; dropped?: DroppedJob } = {},
  ) {
    this.#catalog = catalog;
    this.#logger = logger;
    this.#batchSize = options.batchSize ?? 64;
    this.#batchBytes = options.batchBytes;
    this.#inFlight = options.inFlight ?? 1;
    this.#notify = options.notify;
    this.#dropped = options.dropped ?? (() => {});
  }

  async enqueue(_jobs: IngestJob[]): Promise<void> {
    this.wake();
    this.#notify?.();
  }

  /** New rows are in the table: look now rather than at the next poll. */
  wake(): void {
    this.#wake?.();
  }

  /** A queued or processing row is the job itself: it cannot be lost apart from the row. */
  async isPending(_jobId: string): Promise<boolean> {
    return true;
  }

  /** The row, marked queued again by the caller, is the job: the consumer only needs waking. */
  async resubmit(job: IngestJob): Promise<boolean> {
    await this.enqueue([job]);
    return true;
  }

  start(handlers: JobHandlers): void {
    if (this.#running) throw new Error("queue already started");
    this.#running = true;
    this.#loop = this.#consume(handlers);
  }

  /** The claimed rows that are well-formed jobs; the others are logged, counted and left out. */
  #valid(rows: unknown[]): ClaimedJob[] {
    return rows.flatMap((row) => {
      const job = parseJob("ingest", row, undefined, (queue, detail) => {
        this.#logger.warn({ queue, ...detail }, "dropped a malformed ingestion job");
        this.#dropped(queue, detail);
      });
      if (!job) return [];
      const { record } = row as ClaimedJob;
      const ofThisVersion = record?.collection === job.collection && record.docId === job.docId && record.version === job.version;
      return [ofThisVersion ? { ...job, record } : job];
    });
  }

  async #consume(handlers: JobHandlers): Promise<void> {
    const requeued = await this.#retrying("cannot re-queue documents left in processing", () => this.#catalog.requeueProcessing());
    if (requeued) this.#logger.info({ requeued }, "re-queued documents left in processing");
    let next = this.#claim();
    const running = new Set<Promise<void>>();
    while (this.#running) {
      const rows = await next;
      if (rows.length === 0) {
        // Sleep until a new job arrives; the timeout also picks up rows other processes add.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 1000);
          this.#wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.#wake = null;
        next = this.#claim();
        continue;
      }
      // Claim the next batch while this one is handled, so the worker never waits for it.
      next = this.#claim();
      const jobs = this.#valid(rows);
      if (jobs.length === 0) continue;
      // Up to `#inFlight` batches at once: one is prepared (extracted, chunked: JavaScript) while
      // the one before is written to the index (native threads), and the one before that marked
      // ready. Handlers must allow this; the ingestion pipeline does, as index writes and catalog
      // marks are guarded by version.
      const handled = this.#handle(handlers, jobs);
      running.add(handled);
      void handled.finally(() => running.delete(handled));
      if (running.size >= this.#inFlight) await Promise.race(running);
    }
    await Promise.all(running);
    // Hand back what was claimed ahead but not handled.
    await this.#release(this.#valid(await next));
  }

  /** The next batch of rows (none once stopped); never rejects. */
  #claim(): Promise<unknown[]> {
    return this.#retrying("cannot claim queued documents", () => this.#catalog.claimQueued(this.#batchSize, this.#batchBytes)).then(
      (rows) => rows ?? [],
    );
  }

  /** Never rejects: a failed batch goes back to the queue, to be claimed again after a pause. */
  async #handle(handlers: JobHandlers, jobs: IngestJob[]): Promise<void> {
    try {
      // The table keeps a failed batch queued for the next start, so no attempt is final.
      await handlers.ingest(jobs, { finalAttempt: false });
      this.#failures = 0;
    } catch (err) {
      this.#logger.error({ err, jobs: jobs.length }, "ingestion batch failed; re-queueing");
      await this.#release(jobs);
      await this.#pause();
    }
  }

  /** Puts claimed jobs back in the queue; never rejects. Jobs a stop leaves in processing are re-queued at the next start. */
  async #release(jobs: IngestJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const released = await this.#retrying("cannot re-queue documents", async () => {
      await this.#catalog.release(jobs);
      return true;
    });
    if (!released) this.#logger.warn({ jobs: jobs.length }, "documents left in processing; the next start re-queues them");
  }

  /**
   * Runs `step` until it succeeds, pausing after each failure (a catalog that cannot be
   * written: DATA_DIR full, say), and returns its result; undefined when stopped first.
   */
  async #retrying<T>(what: string, step: () => T | Promise<T>): Promise<T | undefined> {
    for (;;) {
      try {
        return await step();
      } catch (err) {
        if (!this.#running) return undefined;
        this.#logger.error({ err }, `${what}; trying again`);
        await this.#pause();
        if (!this.#running) return undefined;
      }
    }
  }

  /** After a failure: 1 s, doubled with each failure in a row up to 8 s, cut short by stop(). */
  async #pause(): Promise<void> {
    const ms = Math.min(PAUSE_MAX_MS, PAUSE_MS * 2 ** this.#failures);
    this.#failures = Math.min(this.#failures + 1, 10);
    await sleep(ms, undefined, { signal: this.#stopping.signal }).catch(() => {});
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#stopping.abort();
    this.#wake?.();
    await this.#loop;
  }

  async ping(): Promise<void> {
    await this.#catalog.ping();
  }

  /** The table is the catalog's: nothing of its own to release. */
  async close(): Promise<void> {
    await this.stop();
  }
}
