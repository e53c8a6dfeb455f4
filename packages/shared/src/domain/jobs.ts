/**
 * Every queue contract in one place: queue names, payload schemas, the types inferred from
 * them and default job options. Producer (API) and consumers (the worker process, the embedded
 * worker thread) import the same definitions, and every queue adapter validates each payload
 * again when it hands a job out (`parseJob`): a malformed one is dropped, never retried.
 */
import { z } from "zod";

/**
 * How a queue keeps and retries its jobs: the part of BullMQ's job options this project
 * sets, declared without the queue library so that the contract stays domain-level. The BullMQ
 * adapter (queue/bullmq.ts) passes it to BullMQ as is, so the typecheck holds the two together.
 */
export interface JobOptions {
  attempts: number;
  backoff: { type: "exponential" | "fixed"; delay: number };
  removeOnComplete: { count: number; age?: number };
  removeOnFail: { count: number; age?: number };
}

function defineQueue<S extends z.ZodType>(name: string, payload: S, options: JobOptions) {
  return { name, payload, options } as const;
}

export const QUEUES = {
  ingest: defineQueue(
    "ingest",
    z.object({
      collection: z.string().min(1).max(64),
      docId: z.string().min(1).max(200),
      version: z.number().int().min(1),
      jobId: z.string().regex(/^[0-9a-f-]{36}$/),
    }),
    {
      // The job id is the document version's id (see BullQueue.enqueue): adding it twice is a no-op.
      // Retried 1, 2, 4 ... 64 s apart: a dependency down for about two minutes (a restart, a
      // failover) fails no document; the embedder's own retries (120 s a call) come on top.
      attempts: 8,
      backoff: { type: "exponential", delay: 1000 },
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 10_000, age: 7 * 24 * 3600 },
    },
  ),
} as const;

export type QueueName = keyof typeof QUEUES;
export type JobOf<N extends QueueName> = z.infer<(typeof QUEUES)[N]["payload"]>;

/** One version of one document to ingest. */
export type IngestJob = JobOf<"ingest">;

/**
 * How a batch is handed out. `finalAttempt`: no retry follows a failure. `abandon`: the jobs must
 * not run again, because the workers that took them died while handling them (as they do when a
 * document crashes its worker); the reason says so.
 */
export interface Attempt {
  finalAttempt: boolean;
  abandon?: string;
}

/**
 * Handles a batch of jobs. Throwing hands the batch back for a retry; on the final attempt
 * the handler should settle its jobs (e.g. mark their documents failed) rather than throw, and
 * an abandoned batch it settles as given up without running it.
 */
export type JobHandler<N extends QueueName> = (jobs: JobOf<N>[], attempt: Attempt) => Promise<void>;

/** A consumer's handlers: leaving a queue without one is a compile error. */
export type JobHandlers = { [N in QueueName]: JobHandler<N> };

/** Called for each payload a consumer dropped because it did not match its schema. */
export type DroppedJob = (queue: QueueName, detail: { jobId: string | undefined; issues: string[] }) => void;

/** The payload if it matches the queue's schema, else null (after reporting it to `dropped`). */
export function parseJob<N extends QueueName>(queue: N, data: unknown, jobId: string | undefined, dropped: DroppedJob): JobOf<N> | null {
  const parsed = QUEUES[queue].payload.safeParse(data);
  if (parsed.success) return parsed.data as JobOf<N>;
  dropped(queue, { jobId, issues: parsed.error.issues.slice(0, 3).map((i) => `${i.path.join(".") || "payload"}: ${i.message}`) });
  return null;
}
