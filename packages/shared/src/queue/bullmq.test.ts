import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import type { IngestJob } from "../jobs.ts";
import { deleteRedisKeys, testRedisPrefix } from "../../test-support/redis-server.ts";
import { BullQueue } from "./bullmq.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefixes: string[] = [];
const queues: BullQueue[] = [];

function queue(concurrency: number): BullQueue {
  const prefix = testRedisPrefix();
  prefixes.push(prefix);
  const q = new BullQueue({ redisUrl: REDIS_URL, prefix, concurrency, logger: createLogger("silent") });
  queues.push(q);
  return q;
}

afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.close()));
  for (const prefix of prefixes.splice(0)) await deleteRedisKeys(REDIS_URL, `${prefix}:*`);
});

const job = (i: number): IngestJob => ({ collection: "c", docId: `d${i}`, version: 1, jobId: randomUUID() });

describe("BullQueue", () => {
  it("hands jobs over in batches of up to its concurrency, each job once", async () => {
    const q = queue(4);
    const groups = 8;
    const jobs = Array.from({ length: groups * 4 }, (_, i) => job(i));
    const batches: string[][] = [];
    let waiting: { count: number; done: () => void } | null = null;
    q.start({
      ingest: async (batch) => {
        batches.push(batch.map((j) => j.docId));
        await new Promise((r) => setTimeout(r, 50)); // an index commit
        if (waiting && batches.flat().length >= waiting.count) waiting.done();
      },
    });
    // As an API adds them: four requests a few milliseconds apart, to a worker waiting for jobs.
    for (let g = 0; g < groups; g++) {
      const handled = new Promise<void>((done) => (waiting = { count: (g + 1) * 4, done }));
      for (const j of jobs.slice(g * 4, g * 4 + 4)) {
        await q.enqueue(j);
        await new Promise((r) => setTimeout(r, 2));
      }
      await handled;
    }
    expect(batches.flat().sort()).toEqual(jobs.map((j) => j.docId).sort());
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThanOrEqual(4);
    // Each handled as BullMQ hands it over, the jobs made a batch each (31 or 32 batches).
    expect(batches.length).toBeLessThanOrEqual(groups * 2);
  }, 60_000);
});
