import { afterEach, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { SqliteCatalog } from "../catalog/sqlite.ts";
import { CATALOG_SCHEMA, openDatabase } from "../sqlite/db.ts";
import { createLogger } from "../logger.ts";
import { testRedisPrefix } from "../../test-support/redis-server.ts";
import { newDocument } from "../../test-support/catalog-contract.ts";
import { bullQueueFixture } from "../../test-support/bull-queue.ts";
import { recoverLostJobs } from "./lost-jobs.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const logger = createLogger("silent");
const undo: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (let next = undo.pop(); next; next = undo.pop()) await next();
});

async function fixture() {
  const dir = await mkdtemp(path.join(tmpdir(), "docstore-lost-"));
  const catalog = new SqliteCatalog(openDatabase(path.join(dir, "catalog.sqlite"), CATALOG_SCHEMA));
  const prefix = testRedisPrefix();
  const { queue, raw, close } = bullQueueFixture(REDIS_URL, prefix, { concurrency: 1 });
  undo.push(async () => {
    await close();
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  });
  return { catalog, queue, raw };
}

describe("recoverLostJobs", () => {
  it("queues again the jobs of pending documents that no queue holds, a bounded number a round, resuming where it stopped", async () => {
    const { catalog, queue, raw } = await fixture();
    const records = [];
    for (let i = 0; i < 5; i++) {
      records.push((await catalog.accept(newDocument("c", `d${i}`, { jobId: randomUUID() }))).record);
      await new Promise((r) => setTimeout(r, 3));
    }
    // d1 and d3 still have their jobs; d4 was indexed meanwhile; the others' jobs are lost.
    for (const r of [records[1]!, records[3]!])
      await queue.enqueue([{ collection: "c", docId: r.docId, version: r.version, jobId: r.jobId }]);
    await catalog.markReady("c", "d4", 1, 1);
    const ports = { catalog, queue, logger };
    const round = (cursor: string | null) => recoverLostJobs(ports, { lostAfterMs: 0, limit: 2, cursor });

    const first = await round(null);
    expect(first).toMatchObject({ checked: 2, resubmitted: 1 });
    expect(first.cursor).not.toBeNull();
    const second = await round(first.cursor);
    expect(second).toMatchObject({ checked: 2, resubmitted: 1, cursor: null });
    const jobs = (await raw.getJobs(["waiting"])).map((j) => j.data.docId).sort();
    expect(jobs).toEqual(["d0", "d1", "d2", "d3"]);
    // Nothing is lost now: another round, from the start, queues nothing twice.
    expect(await recoverLostJobs(ports, { lostAfterMs: 0, limit: 100, cursor: null })).toEqual({
      checked: 4,
      resubmitted: 0,
      cursor: null,
    });
    expect(await raw.getJobCounts("waiting")).toEqual({ waiting: 4 });
    // Documents that changed within the grace are not looked at.
    expect(await recoverLostJobs(ports, { lostAfterMs: 60_000, limit: 100, cursor: null })).toEqual({
      checked: 0,
      resubmitted: 0,
      cursor: null,
    });
  });
});
