import { Queue, Worker, type Job } from "bullmq";
import { Redis } from "ioredis";
import type { JobQueue } from "../ports.ts";
import type { Logger } from "../logger.ts";
import { UnavailableError } from "../errors.ts";
import { QUEUES, parseJob, type DroppedJob, type IngestJob, type JobHandler, type JobHandlers } from "../jobs.ts";

const ingest = QUEUES.ingest;

/**
 * How long a batch's first job waits for more. Each batch is an index commit, and a commit of
 * one document costs nearly as much as one of several.
 */
const GATHER_MS = 20;

export interface BullQueueOptions {
  redisUrl: string;
  /** Redis key prefix: several deployments (or test runs) can share one Redis. */
  prefix: string;
  concurrency: number;
  logger: Logger;
  /** How long a worker holds a job before another may take it over (a dead worker's jobs). */
  lockMs?: number;
  /** Told of each malformed payload dropped (for the worker's metrics). */
  dropped?: DroppedJob;
}

/**
 * The distributed queue: BullMQ on Redis. Producers fail fast when Redis is down (the API
 * answers 503) instead of buffering in memory; workers reconnect forever.
 */
export class BullQueue implements JobQueue {
  readonly #options: BullQueueOptions;
  readonly #producerConnection: Redis;
  readonly #queue: Queue;
  #worker: Worker | null = null;
  #batch: { job: IngestJob; finalAttempt: boolean; done: (err?: unknown) => void }[] = [];
  /** The timer that flushes a batch not yet full. */
  #gathering: NodeJS.Timeout | null = null;

  constructor(options: BullQueueOptions) {
    this.#options = options;
    this.#producerConnection = new Redis(options.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      lazyConnect: false,
    });
    this.#producerConnection.on("error", (err) => options.logger.debug({ err }, "redis (producer) error"));
    this.#queue = new Queue(ingest.name, { connection: this.#producerConnection, prefix: options.prefix, defaultJobOptions: ingest.options });
    this.#queue.on("error", (err) => options.logger.debug({ err }, "queue error"));
  }

  async enqueue(job: IngestJob): Promise<void> {
    try {
      await this.#queue.add(ingest.name, job, { jobId: job.jobId });
    } catch (err) {
      throw new UnavailableError(`queue unavailable: ${(err as Error).message}`, err);
    }
  }

  start(handlers: JobHandlers): void {
    const handler = handlers.ingest;
    if (this.#worker) throw new Error("queue already started");
    const lockDuration = this.#options.lockMs ?? 10_000;
    const connection = new Redis(this.#options.redisUrl, { maxRetriesPerRequest: null });
    connection.on("error", (err) => this.#options.logger.warn({ err: err.message }, "redis (worker) error"));
    this.#worker = new Worker(ingest.name, (job) => this.#process(job, handler), {
      connection,
      prefix: this.#options.prefix,
      concurrency: this.#options.concurrency,
      lockDuration,
      stalledInterval: Math.max(1000, Math.floor(lockDuration / 2)),
      maxStalledCount: 3,
    });
    this.#worker.on("error", (err) => this.#options.logger.warn({ err: err.message }, "worker error"));
    this.#worker.on("failed", (job, err) =>
      this.#options.logger.warn({ jobId: job?.id, attempts: job?.attemptsMade, err: err.message }, "ingestion job failed"),
    );
  }

  async #process(job: Job, handler: JobHandler<"ingest">): Promise<void> {
    // A retry can never fix a malformed payload: drop it (the job completes), log it, count it.
    const payload = parseJob("ingest", job.data, job.id, (queue, detail) => {
      this.#options.logger.warn({ queue, ...detail }, "dropped a malformed ingestion job");
      this.#options.dropped?.(queue, detail);
    });
    if (!payload) return;
    const attempts = job.opts.attempts ?? 1;
    const finalAttempt = job.attemptsMade + 1 >= attempts;
    // Jobs taken together (up to the concurrency) are handled as one batch: one index commit and
    // one catalog commit instead of one per document. BullMQ hands them over one at a time, so
    // the first waits up to GATHER_MS for the others.
    await new Promise<void>((resolve, reject) => {
      this.#batch.push({ job: payload, finalAttempt, done: (err) => (err ? reject(err) : resolve()) });
      if (this.#batch.length >= this.#options.concurrency) {
        if (this.#gathering) clearTimeout(this.#gathering);
        this.#gathering = null;
        void this.#flush(handler);
      } else {
        this.#gathering ??= setTimeout(() => {
          this.#gathering = null;
          void this.#flush(handler);
        }, GATHER_MS);
      }
    });
  }

  async #flush(handler: JobHandler<"ingest">): Promise<void> {
    const batch = this.#batch;
    this.#batch = [];
    // A job on its last attempt is handled apart, so that giving up on it fails only it.
    const groups = [batch.filter((b) => !b.finalAttempt), ...batch.filter((b) => b.finalAttempt).map((b) => [b])];
    for (const group of groups) {
      if (group.length === 0) continue;
      try {
        await handler(group.map((b) => b.job), { finalAttempt: group[0]!.finalAttempt });
        for (const b of group) b.done();
      } catch (err) {
        for (const b of group) b.done(err);
      }
    }
  }

  /** BullMQ's workers are told of new jobs by Redis. */
  wake(): void {}

  /** Waits for the jobs in flight; jobs not yet taken stay in Redis for other workers. */
  async stop(): Promise<void> {
    await this.#worker?.close();
    this.#worker = null;
  }

  async close(): Promise<void> {
    await this.stop();
    await this.#queue.close();
    this.#producerConnection.disconnect();
  }

  async ping(): Promise<void> {
    try {
      await this.#producerConnection.ping();
    } catch (err) {
      throw new UnavailableError(`queue unavailable: ${(err as Error).message}`, err);
    }
  }
}
