/**
 * Every queue contract in one place: queue names, payload schemas, inferred types and default
 * job options. Producer (API) and consumer (worker) import the same definitions, and the
 * worker validates each payload again when it takes a job.
 */
import { z } from "zod";
import type { JobsOptions } from "bullmq";

function defineQueue<S extends z.ZodType>(name: string, payload: S, options: JobsOptions) {
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
      // A job id per document version: adding the same version twice is a no-op.
      attempts: 5,
      backoff: { type: "exponential", delay: 1000 },
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 10_000, age: 7 * 24 * 3600 },
    },
  ),
} as const;

export type QueueName = keyof typeof QUEUES;
export type JobPayload<N extends QueueName> = z.infer<(typeof QUEUES)[N]["payload"]>;
