import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CATALOG_SCHEMA, openDatabase } from "../sqlite/db.ts";
import { SqliteCatalog } from "../catalog/sqlite.ts";
import { newDocument } from "../../test-support/catalog-contract.ts";
import { createLogger } from "../logger.ts";
import { LocalQueue } from "./local.ts";

describe("LocalQueue", () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(path.join(tmpdir(), "docstore-localq-"))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("hands out batches of at most batchSize documents and batchBytes of contents, in queue order", async () => {
    const catalog = new SqliteCatalog(openDatabase(path.join(dir, "catalog.sqlite"), CATALOG_SCHEMA));
    const sizes = [10, 20, 30, 40, 5, 5, 5, 5];
    for (const [i, size] of sizes.entries()) await catalog.accept(newDocument("c", `d${i}`, { size }));
    const queue = new LocalQueue(catalog, createLogger("silent"), { batchSize: 3, batchBytes: 35 });
    const batches: string[][] = [];
    queue.start({ ingest: async (jobs) => void batches.push(jobs.map((j) => j.docId).sort()) });
    try {
      for (let waited = 0; batches.flat().length < sizes.length && waited < 10_000; waited += 20) await sleep(20);
    } finally {
      await queue.stop();
      await catalog.close();
    }
    // 10 + 20 (30 more would make 60); 30; 40 alone (more than 35 by itself); three of 5 (batchSize); the last.
    expect(batches).toEqual([["d0", "d1"], ["d2"], ["d3"], ["d4", "d5", "d6"], ["d7"]]);
  });
});
