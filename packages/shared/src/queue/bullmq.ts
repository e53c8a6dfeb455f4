import { DelayedError, Queue, Worker, type Job } from "bullmq";
import { Redis } from "ioredis";
import { hostname } from "node:os";
import type { JobQueue } from "../ports.ts";
import type { Logger } from "../logger.ts";
import { StorageError, UnavailableError } from "../errors.ts";
import { QUEUES, parseJob, type Attempt, type DroppedJob, type IngestJob, type JobHandler, type JobHandlers } from "../domain/jobs.ts";

const ingest = QUEUES.ingest;

/** How long a job waits after DATA_DIR refused its writes (full, read-only) before it runs again. */
export const STORAGE_RETRY_MS = 5000;

/**
 * How often a job's worker may die while holding it (its lock lapsing, the job taken back)
 * before the job is given up on: its next run settles it as failed instead of running it.
 */
export const MAX_STALLS = 3;

/**
 * How long a batch's first job waits for more. Each batch is an index commit, and a commit of
 * one document costs nearly as much as one of several.
 */
const GATHER_MS = 20;

/** How long a job taken while a job runs alone waits before it is handed out again. */
const SOLO_DEFER_MS = 1000;

export interface BullQueueOptions {
  redisUrl: string;
  /** Redis key prefix: several deployments (or test runs) can share one Redis. */
  prefix: string;
  /** Jobs a worker holds at once, in batches of up to `batchSize` (several batches in flight). */
  concurrency: number;
  /** Jobs handled together as one batch (one index write); default: the concurrency. */
  batchSize?: number;
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
  #batch: { job: IngestJob; attempt: Attempt; done: (err?: unknown) => void }[] = [];
  /** The timer that flushes a batch not yet full. */
  #gathering: NodeJS.Timeout | null = null;
  /** Jobs of this process gathered into a batch or being handled, not counting one run alone. */
  #held = 0;
  /** Told when #held falls to 0. */
  #drained: (() => void)[] = [];
  /** Whether a job runs alone in this process (or waits for the others to end first). */
  #solo = false;

  constructor(options: BullQueueOptions) {
    this.#options = options;
    this.#producerConnection = new Redis(options.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      lazyConnect: false,
    });
    this.#producerConnection.on("error", (err) => options.logger.debug({ err }, "redis (producer) error"));
    this.#queue = new Queue(ingest.name, {
      connection: this.#producerConnection,
      prefix: options.prefix,
      defaultJobOptions: ingest.options,
    });
    this.#queue.on("error", (err) => options.logger.debug({ err }, "queue error"));
  }

  async enqueue(jobs: IngestJob[]): Promise<void> {
    try {
      // The payload only: the record a claimed job may carry (ClaimedJob) stays out of Redis.
      const payload = ({ collection, docId, version, jobId }: IngestJob) => ({ collection, docId, version, jobId });
      await this.#queue.addBulk(jobs.map((job) => ({ name: ingest.name, data: payload(job), opts: { jobId: job.jobId } })));
    } catch (err) {
      throw new UnavailableError(`queue unavailable: ${(err as Error).message}`, err);
    }
  }

  async isPending(jobId: string): Promise<boolean> {
    return (await this.#state(jobId)) === "pending";
  }

  /**
   * A finished job is kept a while (removeOnComplete, removeOnFail), and while it is, adding its
   * id again would do nothing: it is removed first. BullMQ holds one job per id, so callers
   * racing here leave one job; one that a worker holds (locked) is left alone.
   */
  async resubmit(job: IngestJob): Promise<boolean> {
    const state = await this.#state(job.jobId);
    if (state === "pending") return false;
    try {
      if (state === "finished" && (await this.#queue.remove(job.jobId)) !== 1) return false;
    } catch (err) {
      throw new UnavailableError(`queue unavailable: ${(err as Error).message}`, err);
    }
    await this.enqueue([job]);
    return true;
  }

  /**
   * Whether a job will still run (waiting, delayed, prioritized or active), has finished
   * (completed or failed for good, and kept a while), or is unknown to Redis, read from the job's
   * hash alone: BullMQ keeps one from the job's creation to its removal, and sets its `finishedOn`
   * when the job completes or fails for good (a retry clears it). Queue.getJobState would say the
   * same but looks for the id in the waiting list (LPOS, a scan): with 180,000 jobs waiting, the
   * lost-job recovery's 2,000 look-ups a minute took about 2 ms of Redis each and kept it at 90%
   * of a core, which every worker's job hand-over queued behind.
   * (A job taken out of its list by hand while its hash stays would count as pending.)
   */
  async #state(jobId: string): Promise<"pending" | "finished" | "unknown"> {
    try {
      await this.#queue.waitUntilReady();
      const [created, finished] = await this.#producerConnection.hmget(this.#queue.toKey(jobId), "timestamp", "finishedOn");
      return created === null ? "unknown" : finished === null ? "pending" : "finished";
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
    this.#worker = new Worker(ingest.name, (job, token) => this.#process(job, token, handler), {
      // Each job records the worker that took it last (BullMQ's processedBy): host and pid.
      name: `${hostname()}:${process.pid}`,
      connection,
      prefix: this.#options.prefix,
      concurrency: this.#options.concurrency,
      lockDuration,
      stalledInterval: Math.max(1000, Math.floor(lockDuration / 2)),
      // Past this, BullMQ fails a job without running it, which would leave its document in
      // `processing`: #process gives it up one stall earlier, settling the document.
      maxStalledCount: MAX_STALLS + 1,
    });
    this.#worker.on("error", (err) => this.#options.logger.warn({ err: err.message }, "worker error"));
    this.#worker.on("failed", (job, err) =>
      this.#options.logger.warn({ jobId: job?.id, attempts: job?.attemptsMade, err: err.message }, "ingestion job failed"),
    );
  }

  async #process(job: Job, token: string | undefined, handler: JobHandler<"ingest">): Promise<void> {
    // A retry can never fix a malformed payload: drop it (the job completes), log it, count it.
    const payload = parseJob("ingest", job.data, job.id, (queue, detail) => {
      this.#options.logger.warn({ queue, ...detail }, "dropped a malformed ingestion job");
      this.#options.dropped?.(queue, detail);
    });
    if (!payload) return;
    const attempts = job.opts.attempts ?? 1;
    const attempt: Attempt = { finalAttempt: job.attemptsMade + 1 >= attempts };
    if (job.stalledCounter > MAX_STALLS) {
      attempt.abandon = `its worker stopped ${job.stalledCounter} times while indexing it (killed, or crashed by it); load it again to retry`;
    }
    try {
      // A job whose worker died holding it runs alone: if it takes this worker down too, the jobs
      // that were batched with it are not counted a stall each time with it, and given up on.
      // While it runs (and while it waits for the jobs in flight to end) this worker takes no
      // new job, and hands back the ones it was taking.
      if (this.#solo) return await this.#defer(job, token);
      if (job.stalledCounter > 0 && attempt.abandon === undefined) return await this.#runAlone(payload, attempt, handler);
      this.#held++;
      try {
        await this.#gather(payload, attempt, handler);
      } finally {
        if (--this.#held === 0) for (const drained of this.#drained.splice(0)) drained();
      }
    } catch (err) {
      if (!(err instanceof StorageError)) throw err;
      // DATA_DIR full or read-only: the job runs again later, for as long as that lasts, and
      // spends no attempt (a delayed job keeps its count), so it is never given up on for it.
      this.#options.logger.warn({ jobId: job.id, err: err.message }, "ingestion job waits for storage");
      await job.moveToDelayed(Date.now() + STORAGE_RETRY_MS, token);
      throw new DelayedError();
    }
  }

  /**
   * Jobs taken together (up to the batch size) are handled as one batch: one index commit and
   * one catalog commit instead of one per document. BullMQ hands them over one at a time, so the
   * first waits up to GATHER_MS for the others. While a batch is handled, the worker takes more
   * jobs (up to its concurrency), which make the next batches.
   */
  #gather(payload: IngestJob, attempt: Attempt, handler: JobHandler<"ingest">): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#batch.push({ job: payload, attempt, done: (err) => (err ? reject(err) : resolve()) });
      if (this.#batch.length >= (this.#options.batchSize ?? this.#options.concurrency)) {
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

  async #runAlone(payload: IngestJob, attempt: Attempt, handler: JobHandler<"ingest">): Promise<void> {
    const worker = this.#worker!;
    this.#solo = true;
    try {
      await worker.pause(true);
      while (this.#held > 0) await new Promise<void>((drained) => this.#drained.push(drained));
      await handler([payload], attempt);
    } finally {
      this.#solo = false;
      if (this.#worker === worker) void worker.resume();
    }
  }

  /** Hands a job back (BullMQ's delayed set) without spending an attempt or counting a stall. */
  async #defer(job: Job, token: string | undefined): Promise<never> {
    await job.moveToDelayed(Date.now() + SOLO_DEFER_MS, token);
    throw new DelayedError();
  }

  async #flush(handler: JobHandler<"ingest">): Promise<void> {
    const batch = this.#batch;
    this.#batch = [];
    // A job on its last attempt, or abandoned, is handled apart, so that giving up on it fails only it.
    const apart = (b: (typeof batch)[number]) => b.attempt.finalAttempt || b.attempt.abandon !== undefined;
    const groups = [batch.filter((b) => !apart(b)), ...batch.filter(apart).map((b) => [b])];
    for (const group of groups) {
      if (group.length === 0) continue;
      try {
        await handler(
          group.map((b) => b.job),
          group[0]!.attempt,
        );
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
