import { afterEach, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { Worker } from "bullmq";
import { Redis } from "ioredis";
import { UnavailableError } from "../errors.ts";
import { freePort, RedisServer, testRedisPrefix } from "../../test-support/redis-server.ts";
import { bullQueueFixture } from "../../test-support/bull-queue.ts";
import type { IngestJob } from "../domain/jobs.ts";
import type { ClaimedJob } from "../ports.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const undo: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (let next = undo.pop(); next; next = undo.pop()) await next();
});

function fixture(
  redisUrl = REDIS_URL,
  prefix = testRedisPrefix(),
  sizes: { concurrency: number; batchSize?: number } = { concurrency: 4 },
) {
  const { queue, raw, close } = bullQueueFixture(redisUrl, prefix, sizes);
  undo.push(close);
  return { queue, raw, prefix };
}

const job = (): IngestJob => ({ collection: "c", docId: `d-${randomUUID().slice(0, 8)}`, version: 1, jobId: randomUUID() });

async function until(probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("BullQueue: pending jobs and resubmission", () => {
  it("tells a waiting job from a lost one, and resubmits only the lost one", async () => {
    const { queue, raw } = fixture();
    const waiting = job();
    const lost = job();
    await queue.enqueue([waiting]);
    await queue.enqueue([lost]);
    expect(await queue.isPending(waiting.jobId)).toBe(true);
    expect(await queue.resubmit(waiting)).toBe(false);
    expect(await raw.remove(lost.jobId)).toBe(1); // as if Redis had lost it
    expect(await queue.isPending(lost.jobId)).toBe(false);
    expect(await queue.isPending(randomUUID())).toBe(false);
    expect(await queue.resubmit(lost)).toBe(true);
    expect(await queue.isPending(lost.jobId)).toBe(true);
    expect(await raw.getJobCounts("waiting")).toEqual({ waiting: 2 });
  });

  it("stores the payload only, never a record a job carries", async () => {
    const { queue, raw } = fixture();
    const plain = job();
    const record = { ...plain, status: "processing", metadata: { secret: "kept out" } } as unknown as ClaimedJob["record"];
    const carried: ClaimedJob = { ...plain, record };
    await queue.enqueue([carried]);
    expect((await raw.getJob(plain.jobId))?.data).toEqual(plain);
  });

  it("calls pending exactly the jobs that BullMQ's getJobState calls waiting, delayed, prioritized or active", async () => {
    // isPending reads the job's hash rather than scanning the waiting list: the two must agree.
    const { queue, raw, prefix } = fixture();
    const data = (id: string) => ({ collection: "c", docId: id, version: 1, jobId: id });
    const id = () => randomUUID();
    const [waiting, delayed, prioritized, active, completed, failed, retrying, removed] = [id(), id(), id(), id(), id(), id(), id(), id()];
    await raw.add("ingest", data(delayed), { jobId: delayed, delay: 60_000 });
    for (const j of [active, completed, failed, retrying]) {
      await raw.add("ingest", data(j), { jobId: j, attempts: j === retrying ? 3 : 1, backoff: { type: "fixed", delay: 60_000 } });
    }
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const worker = new Worker(
      "ingest",
      async (j) => {
        if (j.id === active) await held;
        if (j.id === failed || j.id === retrying) throw new Error("refused");
      },
      { connection, prefix, concurrency: 8 },
    );
    undo.push(async () => {
      release();
      await worker.close();
      connection.disconnect();
    });
    await until(async () => (await raw.getJobCounts("completed", "failed", "delayed")).failed === 1);
    await until(async () => (await raw.getJobState(retrying)) === "delayed" && (await raw.getJobState(completed)) === "completed");
    await raw.pause(); // the active job stays held; nothing else is taken
    await raw.add("ingest", data(prioritized), { jobId: prioritized, priority: 3 });
    await raw.add("ingest", data(waiting), { jobId: waiting });
    await raw.add("ingest", data(removed), { jobId: removed });
    await raw.remove(removed);
    const expected = {
      waiting: true,
      delayed: true,
      prioritized: true,
      active: true,
      completed: false,
      failed: false,
      retrying: true,
      removed: false,
      unknown: false,
    };
    const ids = { waiting, delayed, prioritized, active, completed, failed, retrying, removed, unknown: id() };
    const states = Object.fromEntries(await Promise.all(Object.entries(ids).map(async ([k, v]) => [k, await raw.getJobState(v)])));
    expect(states).toMatchObject({
      waiting: "waiting",
      delayed: "delayed",
      prioritized: "prioritized",
      active: "active",
      completed: "completed",
      failed: "failed",
      retrying: "delayed",
      unknown: "unknown",
    });
    const pending = Object.fromEntries(await Promise.all(Object.entries(ids).map(async ([k, v]) => [k, await queue.isPending(v)])));
    expect(pending).toEqual(expected);
  });

  it("leaves one job when several callers resubmit the same lost job at once", async () => {
    // Two processes (two workers' recovery rounds) on one queue.
    const { queue, raw, prefix } = fixture();
    const other = fixture(REDIS_URL, prefix).queue;
    const lost = job();
    const answers = await Promise.all([queue.resubmit(lost), other.resubmit({ ...lost }), queue.resubmit(lost), other.resubmit(lost)]);
    expect(answers).toContain(true);
    expect(await raw.getJobCounts("waiting", "active", "delayed", "prioritized")).toEqual({
      waiting: 1,
      active: 0,
      delayed: 0,
      prioritized: 0,
    });
  });

  it("runs a finished job again when resubmitted, where a plain enqueue of its id does nothing", async () => {
    const { queue, raw } = fixture();
    const runs: string[] = [];
    queue.start({ ingest: async (jobs) => void runs.push(...jobs.map((j) => j.jobId)) });
    const done = job();
    await queue.enqueue([done]);
    await until(async () => (await raw.getJobState(done.jobId)) === "completed");
    expect(await queue.isPending(done.jobId)).toBe(false);
    await queue.enqueue([done]); // BullMQ keeps the completed job, and its id makes this a no-op
    await new Promise((r) => setTimeout(r, 300));
    expect(runs).toEqual([done.jobId]);
    expect(await queue.resubmit(done)).toBe(true);
    await until(async () => runs.length === 2);
    await until(async () => (await raw.getJobState(done.jobId)) === "completed");
    expect(runs).toEqual([done.jobId, done.jobId]);
  });

  it("answers UnavailableError while Redis is down", async () => {
    const server = new RedisServer(await freePort());
    await server.start();
    undo.push(() => server.stop());
    const { queue } = fixture(server.url);
    const one = job();
    await queue.enqueue([one]);
    await server.stop();
    await expect(queue.isPending(one.jobId)).rejects.toBeInstanceOf(UnavailableError);
    await expect(queue.resubmit(one)).rejects.toBeInstanceOf(UnavailableError);
  });
});

describe("BullQueue: batches", () => {
  it("hands jobs over in batches of up to its concurrency, each job once", async () => {
    const { queue: q } = fixture();
    const groups = 8;
    const jobs = Array.from(
      { length: groups * 4 },
      (_, i): IngestJob => ({ collection: "c", docId: `d${i}`, version: 1, jobId: randomUUID() }),
    );
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
        await q.enqueue([j]);
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

describe("BullQueue: batches in flight", () => {
  it("handles several batches of the batch size at once, up to its concurrency", async () => {
    const { queue: q } = fixture(REDIS_URL, testRedisPrefix(), { concurrency: 12, batchSize: 4 });
    const jobs = Array.from({ length: 48 }, job);
    await q.enqueue(jobs);
    const batches: string[][] = [];
    let inFlight = 0;
    let most = 0;
    const all = new Promise<void>((done) => {
      q.start({
        ingest: async (batch) => {
          batches.push(batch.map((j) => j.docId));
          most = Math.max(most, ++inFlight);
          await new Promise((r) => setTimeout(r, 200)); // an index commit
          inFlight--;
          if (batches.flat().length === jobs.length) done();
        },
      });
    });
    await all;
    expect(batches.flat().sort()).toEqual(jobs.map((j) => j.docId).sort());
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThanOrEqual(4);
    expect(most).toBeGreaterThanOrEqual(2);
    expect(most).toBeLessThanOrEqual(3);
  }, 60_000);
});

describe("BullQueue: a job whose worker died holding it", () => {
  it("runs alone: the jobs in flight end first, the ones taken meanwhile are handed back unspent", async () => {
    const { queue: q, raw, prefix } = fixture();
    const normal = Array.from({ length: 12 }, (_, i): IngestJob => ({ collection: "c", docId: `n${i}`, version: 1, jobId: randomUUID() }));
    const suspects = Array.from({ length: 3 }, (_, i): IngestJob => ({ collection: "c", docId: `s${i}`, version: 1, jobId: randomUUID() }));
    await q.enqueue(normal.slice(0, 4));
    // As a stall leaves it (BullMQ's stalled counter, the job back in the waiting list).
    const redis = new Redis(REDIS_URL);
    undo.push(async () => redis.disconnect());
    for (const s of suspects) {
      await q.enqueue([s]);
      await redis.hset(`${prefix}:ingest:${s.jobId}`, "stc", "1");
    }
    await q.enqueue(normal.slice(4));

    let inFlight: string[] = [];
    const handled: string[][] = [];
    const aloneSeen: { doc: string; others: string[]; active: number }[] = [];
    q.start({
      ingest: async (batch) => {
        const ids = batch.map((j) => j.docId);
        handled.push(ids);
        const others = [...inFlight];
        inFlight.push(...ids);
        if (ids.some((d) => d.startsWith("s"))) {
          // What BullMQ says this worker holds while the job runs: itself, once the jobs taken meanwhile are handed back.
          let active = await raw.getActiveCount();
          for (let t = 0; active > 1 && t < 100; t++, active = await raw.getActiveCount()) await new Promise((r) => setTimeout(r, 20));
          aloneSeen.push({ doc: ids.join(","), others, active });
        }
        await new Promise((r) => setTimeout(r, 50)); // an index commit
        inFlight = inFlight.filter((d) => !ids.includes(d));
      },
    });
    await until(
      async () =>
        handled.flat().length >= normal.length + suspects.length &&
        (await raw.getJobCounts("completed")).completed === normal.length + suspects.length,
    );

    expect(handled.flat().sort()).toEqual([...normal, ...suspects].map((j) => j.docId).sort());
    expect(aloneSeen.map((a) => a.doc).sort()).toEqual(["s0", "s1", "s2"]);
    for (const seen of aloneSeen) expect(seen).toMatchObject({ others: [], active: 1 });
    // Handed back, not failed: no job spent an attempt.
    for (const j of await raw.getCompleted()) expect(j.attemptsMade).toBe(1);
  }, 60_000);
});
