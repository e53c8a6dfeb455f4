import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { parseFilter } from "../filter/parse.ts";
import type { IndexedDocument } from "../ports.ts";
import { connect } from "@lancedb/lancedb";
import { LanceSearchIndex, type LanceIndexOptions } from "./lancedb.ts";
import { TEXT_INDEX } from "./lancedb-table.ts";
import { TailWait, type TailCount } from "./lancedb-tail.ts";

// A writer and a searcher on one directory, as the embedded worker thread and the API thread
// are: the searcher's waits are decided by what the writer committed and folded in.
const dirs: string[] = [];
const open: LanceSearchIndex[] = [];
function make(options: Partial<LanceIndexOptions> & { dir: string }): LanceSearchIndex {
  const index = new LanceSearchIndex({ dimensions: null, maintainEveryMs: 0, ...options });
  open.push(index);
  return index;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((i) => i.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const all = parseFilter("");
const doc = (docId: string, text: string): IndexedDocument => ({ collection: "c", docId, version: 1, metadata: {}, text });
const whole = (d: IndexedDocument) => ({ doc: d, chunks: [{ index: 0, text: d.text, start: 0, end: d.text.length }] });
const ospreys = (from: number, n: number) => Array.from({ length: n }, (_, i) => whole(doc(`d${from + i}`, `osprey number ${from + i}`)));
const search = (index: LanceSearchIndex) => index.search({ query: "osprey", collections: ["c"], filter: all, k: 100 });

async function pair(searcher: Partial<LanceIndexOptions>, indexedRows = 1) {
  const dir = mkdtempSync(path.join(tmpdir(), "docstore-tail-"));
  dirs.push(dir);
  // Maintenance only when a test asks for it.
  const writer = make({ dir, soleWriter: true, maintainAfterCommits: Infinity, maintainAfterRows: Infinity });
  await writer.indexDocuments(ospreys(0, indexedRows));
  await writer.maintain();
  // 20 rows the full-text index has not folded in: more than the searcher waits above.
  await writer.indexDocuments(ospreys(indexedRows, 20));
  // searchListedRows 0: the writer lists what it writes, and any list is too long for the
  // searcher, which scans every row outside the index, after the waits tested here.
  return { writer, reader: make({ dir, waitAboveUnindexed: 5, waitWhileAddingAbove: 10, searchListedRows: 0, ...searcher }) };
}

async function timed<T>(run: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run;
  return { value, ms: performance.now() - started };
}

describe("a search beside a tail of rows waiting for maintenance", () => {
  it("waits while no rows are added, and answers once maintenance folded them in", async () => {
    const { writer, reader } = await pair({ waitForIndexMs: 20_000 });
    const searched = timed(search(reader));
    await sleep(600);
    await writer.maintain();
    const { value: hits, ms } = await searched;
    // It could not answer before the index held the tail, which maintenance began at 600 ms.
    expect(ms).toBeGreaterThanOrEqual(600);
    expect(hits.map((h) => h.docId).sort()).toEqual(
      ospreys(0, 21)
        .map((i) => i.doc.docId)
        .sort(),
    );
  });

  /** Commits one row every 20 ms until the returned function is called. */
  function loading(writer: LanceSearchIndex, from: number): () => Promise<void> {
    let writing = true;
    const load = (async () => {
      for (let n = from; writing; n++) {
        await writer.indexDocuments(ospreys(n, 1));
        await sleep(20);
      }
    })();
    return () => {
      writing = false;
      return load;
    };
  }

  it.each([
    // 60 rows indexed, 20 waiting: under half the indexed rows, no run is near.
    { tail: "under half the indexed rows", indexedRows: 60, options: {} },
    // 1 row indexed, 20 waiting: more than half the indexed rows, fewer than a writer runs for.
    { tail: "shorter than waitWhileAddingAbove", indexedRows: 1, options: { waitWhileAddingAbove: 1_000 } },
  ])("does not wait while rows are being added, for a tail $tail", { timeout: 30_000 }, async ({ indexedRows, options }) => {
    const { writer, reader } = await pair({ waitForIndexMs: 20_000, ...options }, indexedRows);
    const stop = loading(writer, indexedRows + 20);
    try {
      const { value: hits, ms } = await timed(search(reader));
      expect(ms).toBeLessThan(5_000);
      expect(hits.length).toBeGreaterThanOrEqual(indexedRows + 20);
    } finally {
      await stop();
    }
  });

  it("waits while rows are being added, for a tail of half the indexed rows or more, until a run folds it in", {
    timeout: 30_000,
  }, async () => {
    // 1 row indexed, 20 waiting.
    const { writer, reader } = await pair({ waitForIndexMs: 20_000 });
    const stop = loading(writer, 21);
    try {
      const searched = timed(search(reader));
      await sleep(600);
      await writer.maintain();
      const { value: hits, ms } = await searched;
      expect(ms).toBeGreaterThanOrEqual(600);
      expect(ms).toBeLessThan(10_000);
      expect(hits.length).toBeGreaterThanOrEqual(21);
    } finally {
      await stop();
    }
  });

  it("scans after waitForIndexMs when no maintenance comes, and does not wait again until a run", async () => {
    const { writer, reader } = await pair({ waitForIndexMs: 500 });
    const first = await timed(search(reader));
    expect(first.ms).toBeGreaterThanOrEqual(500);
    expect(first.value).toHaveLength(21);
    const again = await timed(search(reader));
    expect(again.ms).toBeLessThan(500);
    expect(again.value).toHaveLength(21);
    // A longer tail, still no run: no wait either.
    await writer.indexDocuments(ospreys(21, 5));
    const longer = await timed(search(reader));
    expect(longer.ms).toBeLessThan(500);
    expect(longer.value).toHaveLength(26);
    // After a run, a new tail is waited for again.
    await writer.maintain();
    await writer.indexDocuments(ospreys(26, 20));
    await sleep(150); // searches share a reading of the counts for 100 ms
    const next = await timed(search(reader));
    expect(next.ms).toBeGreaterThanOrEqual(500);
    expect(next.value).toHaveLength(46);
  });

  it("waits longer for a larger table: waitForIndexMs for each waitForIndexRows rows", async () => {
    // 21 rows, 7 a period: three times 500 ms.
    const { reader } = await pair({ waitForIndexMs: 500, waitForIndexRows: 7 });
    const first = await timed(search(reader));
    expect(first.ms).toBeGreaterThanOrEqual(1_500);
    expect(first.ms).toBeLessThan(10_000);
    expect(first.value).toHaveLength(21);
  });

  it("ends its wait promptly when the index closes", async () => {
    const { reader } = await pair({ waitForIndexMs: 20_000 });
    const searched = timed(search(reader).catch((err: unknown) => err));
    await sleep(300);
    const closed = timed(reader.close());
    const { ms } = await searched;
    expect(ms).toBeLessThan(5_000);
    expect((await closed).ms).toBeLessThan(5_000);
  });

  it("does not wait for a tail below waitAboveUnindexed", async () => {
    const { reader } = await pair({ waitAboveUnindexed: 1_000, waitForIndexMs: 20_000 });
    const { value, ms } = await timed(search(reader));
    expect(ms).toBeLessThan(5_000);
    expect(value).toHaveLength(21);
  });
});

/** A wait on the counts `counted` gives: above 10 rows waiting, polled every 20 ms, for up to 20 s. */
function countedWait(counted: () => TailCount): TailWait {
  return new TailWait(async () => counted(), {
    aboveRows: 10,
    whileAddingAbove: 10,
    maxWaitMs: 20_000,
    maxWaitRows: 1_000_000,
    pollMs: 20,
  });
}

describe("a wait for maintenance, by the index's counts", () => {
  it("goes on when a run leaves a long tail behind (rows written while it ran), until the run after it", async () => {
    // The counts LanceDB's index statistics give, in turn: 400 of 1,000 rows waiting; a run
    // folds in 300 of them (100 were written while it ran); the next run folds in the rest.
    let count: TailCount = { unindexed: 400, total: 1_000 };
    const wait = countedWait(() => count);
    let settled = false;
    const waiting = wait.settle().then(() => (settled = true));
    await sleep(200);
    expect(settled).toBe(false);
    count = { unindexed: 100, total: 1_000 };
    await sleep(200);
    expect(settled).toBe(false);
    count = { unindexed: 0, total: 1_000 };
    await waiting;
    expect(settled).toBe(true);
  });

  it("ends when a run leaves no more than aboveRows waiting", async () => {
    let count: TailCount = { unindexed: 400, total: 1_000 };
    const wait = countedWait(() => count);
    const waiting = timed(wait.settle());
    await sleep(200);
    count = { unindexed: 10, total: 1_000 };
    expect((await waiting).ms).toBeLessThan(5_000);
  });
});

describe("maintenance during a load", () => {
  it("folds rows in by maintainAfterRows only while someone searches, in any instance on the folder", { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "docstore-demand-"));
    dirs.push(dir);
    const runs: unknown[] = [];
    const logger = { info: (o: unknown) => runs.push(o), warn: () => {}, error: () => {} };
    const writer = make({ dir, soleWriter: true, maintainAfterRows: 10, maintainAfterCommits: Infinity, logger });
    const unindexed = async () => {
      const db = await connect(dir);
      const table = await db.openTable("chunks");
      const stats = await table.indexStats(TEXT_INDEX).catch(() => undefined);
      const rows = await table.countRows();
      table.close();
      db.close();
      return stats ? stats.numUnindexedRows : rows;
    };
    // Nobody searched: 40 rows in four commits, fewer than 15 × maintainAfterRows, wait for no run.
    for (let n = 0; n < 40; n += 10) await writer.indexDocuments(ospreys(n, 10));
    await sleep(1_500);
    expect(runs).toEqual([]);
    expect(await unindexed()).toBe(40);

    // Another instance searches; the writer's next commit (past maintainAfterRows) starts a run.
    const reader = make({ dir, waitAboveUnindexed: 0 });
    expect(await search(reader)).toHaveLength(40);
    await sleep(1_100); // the writer reads the folder's note at most once a second
    await writer.indexDocuments(ospreys(40, 1));
    const deadline = Date.now() + 30_000;
    while (runs.length === 0 && Date.now() < deadline) await sleep(100);
    expect(runs).toHaveLength(1);
    expect(await unindexed()).toBe(0);
  });

  it("while nobody searches, runs after 15 × maintainAfterRows, then after as many rows as the last run compacted", {
    timeout: 60_000,
  }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "docstore-demand-"));
    dirs.push(dir);
    const runs: { rows: number }[] = [];
    const logger = { info: (o: unknown) => runs.push(o as { rows: number }), warn: () => {}, error: () => {} };
    const writer = make({ dir, soleWriter: true, maintainAfterRows: 10, maintainAfterCommits: Infinity, logger });
    const runsAfter = async (n: number) => {
      const deadline = Date.now() + 30_000;
      while (runs.length < n && Date.now() < deadline) await sleep(50);
      await sleep(300); // a run that should not start has had the time to
      return runs.map((r) => r.rows);
    };
    // 140 rows: under the floor of 150. Then one commit of 100: a run folds in all 240.
    for (let n = 0; n < 140; n += 10) await writer.indexDocuments(ospreys(n, 10));
    expect(await runsAfter(0)).toEqual([]);
    await writer.indexDocuments(ospreys(140, 100));
    expect(await runsAfter(1)).toEqual([240]);
    // That run compacted 240 rows: 200 more (past the floor and half the table) start no run; 40 more do.
    await writer.indexDocuments(ospreys(240, 200));
    expect(await runsAfter(1)).toEqual([240]);
    await writer.indexDocuments(ospreys(440, 40));
    expect(await runsAfter(2)).toEqual([240, 240]);
  });
});
