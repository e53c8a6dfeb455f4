import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connect, type Table } from "@lancedb/lancedb";
import { describeIndexContract } from "../../test-support/index-contract.ts";
import { describeIndexModel, reopening } from "../../test-support/index-model.ts";
import { parseFilter } from "../filter/parse.ts";
import type { IndexedDocument } from "../ports.ts";
import { LanceSearchIndex, type LanceIndexOptions } from "./lancedb.ts";
import { findHeads } from "./lancedb-read.ts";
import { TABLE_NAME, completeText, documentText, restOf, tableSchema } from "./lancedb-rows.ts";
import { TEXT_INDEX } from "./lancedb-table.ts";

const dirs: string[] = [];
const open: LanceSearchIndex[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "docstore-lance-"));
  dirs.push(dir);
  return dir;
}
function make(options: Partial<LanceIndexOptions> & { dir: string }): LanceSearchIndex {
  const index = new LanceSearchIndex({ dimensions: 3, maintainEveryMs: 0, ...options });
  open.push(index);
  return index;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((i) => i.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describeIndexContract("LanceDB", async (options) => {
  const dir = mkdtempSync(path.join(tmpdir(), "docstore-lance-"));
  const index = new LanceSearchIndex({ dir, dimensions: 3, maintainEveryMs: 0, fusion: options?.fusion });
  return {
    index,
    async cleanup() {
      await index.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

/** The model fixture on a new folder; `before` makes the table first, as an older version did. */
function modelFixture(before?: (dir: string) => Promise<void>) {
  return async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "docstore-lance-model-"));
    await before?.(dir);
    return reopening(() => new LanceSearchIndex({ dir, dimensions: null, maintainEveryMs: 0 }), {
      maintain: (index) => index.maintain(),
      cleanup: () => rmSync(dir, { recursive: true, force: true }),
    });
  };
}

describeIndexModel("LanceDB", modelFixture(), 40);

// A table of layout 1: stable row ids, no layout mark. Its full-text index is built again after a
// compaction commits, and a search in between may come back short: none is made during a run.
describeIndexModel("LanceDB, a table made before layout 2", modelFixture(async (dir) => {
  const db = await connect(dir);
  const table = await db.createEmptyTable(TABLE_NAME, tableSchema(null), { mode: "create", storageOptions: { newTableEnableStableRowIds: "true" } });
  table.close();
  db.close();
}), 10, { searchDuringMaintenance: false });

const all = parseFilter("");
const doc = (docId: string, text: string, version = 1, collection = "c"): IndexedDocument => ({ collection, docId, version, metadata: { status: "open" }, text });
const whole = (d: IndexedDocument) => ({ doc: d, chunks: [{ index: 0, text: d.text, start: 0, end: d.text.length }] });

describe("LanceSearchIndex", () => {
  it("replaces a document atomically: concurrent searches never see it missing or doubled", async () => {
    const index = make({ dir: tempDir() });
    const version = (v: number) => {
      const parts = Array.from({ length: 1 + (v % 4) }, (_, i) => `osprey v${v} part${i}.`);
      const text = parts.join(" ");
      let at = 0;
      const chunks = parts.map((p, i) => {
        const chunk = { index: i, text: p, start: at, end: at + p.length };
        at += p.length + 1;
        return chunk;
      });
      return { doc: doc("d1", text, v), chunks };
    };
    await index.indexDocuments([version(1)]);
    let writing = true;
    const writer = (async () => {
      for (let v = 2; v <= 30; v++) await index.indexDocuments([version(v)]);
      writing = false;
    })();
    let reads = 0;
    while (writing) {
      const [hits, found] = await Promise.all([
        index.search({ query: "osprey", collections: ["c"], filter: all, k: 50 }),
        index.findDocuments({ collections: ["c"], filter: all, limit: 10, offset: 0 }),
      ]);
      const versions = new Set(hits.map((h) => /v(\d+)/.exec(h.text)![1]));
      expect(versions.size).toBe(1);
      const v = Number([...versions][0]);
      expect(hits).toHaveLength(1 + (v % 4));
      expect(found).toHaveLength(1);
      expect(found[0]!.text).toBe(version(found[0]!.version).doc.text);
      reads += 1;
    }
    await writer;
    expect(reads).toBeGreaterThan(3);
    const last = await index.search({ query: "osprey", collections: ["c"], filter: all, k: 50 });
    expect(last.map((h) => h.text).sort()).toEqual(version(30).chunks.map((c) => c.text));
  });

  it("maintains: old versions are cleaned up and appended rows are still found", async () => {
    const dir = tempDir();
    const index = make({ dir, keepVersionsMs: 0 });
    await index.indexDocuments([whole(doc("d0", "heron first"))]);
    for (let i = 1; i <= 20; i++) await index.indexDocuments([whole(doc(`d${i}`, `heron number ${i}`))]);
    await index.deleteDocument("c", "d3");
    const db = await connect(dir);
    const table = await db.openTable("chunks");
    // The deletion reaches the table just after it is answered (a tombstone until then).
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && (await table.countRows()) !== 20; ) {
      await new Promise((r) => setTimeout(r, 20));
      await table.checkoutLatest();
    }
    expect((await table.indexStats(TEXT_INDEX))?.numUnindexedRows).toBe(20); // 21 appended, 1 deleted
    const stats = await index.maintain();
    expect(stats.prune.oldVersionsRemoved).toBeGreaterThan(15);
    await table.checkoutLatest();
    expect((await table.indexStats(TEXT_INDEX))?.numUnindexedRows).toBe(0);
    // What is left are the versions optimize itself committed (compaction, index update).
    expect((await table.listVersions()).length).toBeLessThanOrEqual(3);
    table.close();
    db.close();
    const hits = await index.search({ query: "heron", collections: ["c"], filter: parseFilter("status=open"), k: 100 });
    expect(hits).toHaveLength(20);
    await index.indexDocuments([whole(doc("d21", "heron late"))]);
    expect(await index.search({ query: "late", collections: ["c"], filter: all, k: 5 })).toHaveLength(1);
  });

  it("maintains after maintainAfterCommits commits of a few rows, without the timer", { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const index = make({ dir, maintainAfterCommits: 5 });
    // Someone searches: without a search, ten times as many commits (see the next test).
    await index.search({ query: "tern", collections: ["c"], filter: all, k: 1 });
    for (let i = 0; i < 5; i++) await index.indexDocuments([whole(doc(`d${i}`, `tern ${i}`))]);
    const db = await connect(dir);
    const table = await db.openTable("chunks");
    const deadline = Date.now() + 30_000; // a guard against a hang: maintenance runs in the background
    let unindexed: number | undefined = 5;
    while (unindexed !== 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      await table.checkoutLatest();
      unindexed = (await table.indexStats(TEXT_INDEX))?.numUnindexedRows;
    }
    expect(unindexed).toBe(0);
    expect((await table.stats()).fragmentStats.numFragments).toBe(1);
    table.close();
    db.close();
    expect(await index.search({ query: "tern", collections: ["c"], filter: all, k: 10 })).toHaveLength(5);
  });

  it("keeps every write made while maintenance runs: appends, replacements and deletes", async () => {
    for (const soleWriter of [true, false]) {
      const dir = tempDir();
      const index = make({ dir, keepVersionsMs: 0, soleWriter });
      for (let i = 0; i < 30; i++) await index.indexDocuments([whole(doc(`d${i}`, `plover ${i}`))]);
      const writes = (async () => {
        for (let i = 0; i < 10; i++) {
          await index.indexDocuments([whole(doc(`n${i}`, `plover new ${i}`)), whole(doc(`d${i}`, `plover replaced ${i}`, 2))]);
          await index.deleteDocument("c", `d${10 + i}`);
        }
      })();
      await Promise.all([index.maintain(), index.maintain().then(() => index.maintain()), writes]);
      await index.maintain();
      const hits = await index.search({ query: "plover", collections: ["c"], filter: all, k: 100 });
      const expected = [
        ...Array.from({ length: 10 }, (_, i) => `d${i}:plover replaced ${i}`),
        ...Array.from({ length: 10 }, (_, i) => `d${20 + i}:plover ${20 + i}`),
        ...Array.from({ length: 10 }, (_, i) => `n${i}:plover new ${i}`),
      ];
      expect(hits.map((h) => `${h.docId}:${h.text}`).sort()).toEqual(expected.sort());
    }
  });

  it("finds a replaced, refreshed or deleted document only as it is now, before and after maintenance, twice over", async () => {
    const dir = tempDir();
    const index = make({ dir, keepVersionsMs: 0 });
    const put = (id: string, text: string, version: number, status: string) => ({ doc: { ...doc(id, text, version), metadata: { status, priority: version }, sha256: `${id}-${version}` }, chunks: [{ index: 0, text, start: 0, end: text.length }] });
    const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `d${String(from + i).padStart(2, "0")}`);
    await index.indexDocuments(ids(0, 40).map((id) => put(id, `heron ${id}`, 1, "open")));
    await index.maintain();
    const check = async (expected: Record<string, string[]>) => {
      for (const [query, docs] of Object.entries(expected)) {
        const [words, filterText] = query.split(" | ");
        const filter = parseFilter(filterText ?? "");
        const found = words ? (await index.search({ query: words, collections: ["c"], filter, k: 100 })).map((h) => h.docId) : (await index.findDocuments({ collections: ["c"], filter, limit: 100, offset: 0 })).map((d) => d.docId);
        expect(found.sort(), query).toEqual(docs);
      }
    };
    for (const round of [1, 2]) {
      const v = round + 1;
      // d00-d09 get new metadata (the same text), d10-d19 a new text and metadata, d20-d24 go.
      for (const id of ids(0, 10)) expect(await index.refreshDocument({ ...put(id, "", v, "closed").doc, sha256: `${id}-1` })).toBe(1);
      await index.indexDocuments(ids(10, 20).map((id) => put(id, `egret${round} ${id}`, v, "closed")));
      for (const id of ids(20, 25)) await index.deleteDocument("c", id);
      const expected = {
        "heron": [...ids(0, 10), ...ids(25, 40)],
        [`egret${round}`]: ids(10, 20),
        "heron | status=closed": ids(0, 10),
        [`heron | priority=${v}`]: ids(0, 10),
        " | status=open": ids(25, 40),
        [` | status=closed^priority=${v}`]: ids(0, 20),
        " | status=open^priority=1": ids(25, 40),
        ...(round === 2 ? { egret1: [] } : {}),
      };
      await check(expected);
      await index.maintain();
      await check(expected);
    }
  });

  it("folds in what writes left once they pause, without waiting for the timer's next tick", async () => {
    const dir = tempDir();
    // The timer would look in a minute; writes pause for min(1 s, a minute / 2) = 1 s.
    const index = make({ dir, maintainEveryMs: 60_000 });
    for (let i = 0; i < 3; i++) await index.indexDocuments([whole(doc(`d${i}`, `osprey ${i}`))]);
    const db = await connect(dir);
    const table = await db.openTable("chunks");
    const unindexed = async () => {
      await table.checkoutLatest();
      return (await table.indexStats(TEXT_INDEX))?.numUnindexedRows ?? -1;
    };
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && (await unindexed()) !== 0) await new Promise((r) => setTimeout(r, 100));
    expect(await unindexed()).toBe(0);
    table.close();
    db.close();
  });

  it("rests after a run before folding in a short tail, and folds in a longer one at once", async () => {
    const dir = tempDir();
    // Writes pause for 50 ms; a run of tens of milliseconds is followed by a rest of a minute or more.
    const index = make({ dir, maintainEveryMs: 100, restFactor: 1_000, restTailRows: 5 });
    await index.indexDocuments([whole(doc("d0", "curlew 0"))]);
    await index.maintain();
    const db = await connect(dir);
    const table = await db.openTable("chunks");
    const unindexed = async () => {
      await table.checkoutLatest();
      return (await table.indexStats(TEXT_INDEX))?.numUnindexedRows ?? -1;
    };
    expect(await unindexed()).toBe(0);
    for (let i = 1; i <= 2; i++) await index.indexDocuments([whole(doc(`d${i}`, `curlew ${i}`))]);
    await new Promise((r) => setTimeout(r, 2_000)); // 20 ticks of the timer, each after the pause
    expect(await unindexed()).toBe(2);
    await index.indexDocuments([3, 4, 5, 6].map((i) => whole(doc(`d${i}`, `curlew ${i}`))));
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && (await unindexed()) !== 0) await new Promise((r) => setTimeout(r, 100));
    expect(await unindexed()).toBe(0);
    table.close();
    db.close();
    expect(await index.search({ query: "curlew", collections: ["c"], filter: all, k: 50 })).toHaveLength(7);
  });

  it("removes the versions its maintenance replaced once they are old enough, without new writes", async () => {
    const dir = tempDir();
    const index = make({ dir, keepVersionsMs: 300, maintainEveryMs: 100 });
    for (let i = 0; i < 12; i++) await index.indexDocuments([whole(doc(`d${i}`, `stork ${i}`))]);
    const db = await connect(dir);
    const table = await db.openTable("chunks");
    const deadline = Date.now() + 10_000;
    let versions = Infinity;
    while (Date.now() < deadline && versions > 3) {
      await new Promise((r) => setTimeout(r, 100));
      try {
        await table.checkoutLatest();
        versions = (await table.listVersions()).length;
      } catch (err) {
        // Listing reads every version's manifest: one the maintenance removes meanwhile is missing. Look again.
        if (!/Not found: \S+\.manifest/.test(String(err))) throw err;
      }
    }
    expect(versions).toBeLessThanOrEqual(3);
    table.close();
    db.close();
    expect(await index.search({ query: "stork", collections: ["c"], filter: all, k: 50 })).toHaveLength(12);
  });

  /** The table's fragments and data files once they are `fragments` (each one file here: no vectors were added later), all indexed; or as they are after 10 s. */
  async function settledFragments(table: Table, dir: string, fragments: number) {
    let files = -1;
    let count = -1;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      await table.checkoutLatest();
      count = (await table.stats()).fragmentStats.numFragments;
      files = readdirSync(path.join(dir, "chunks.lance", "data")).length;
      if (count === fragments && files === fragments && (await table.indexStats(TEXT_INDEX))?.numUnindexedRows === 0) break;
    }
    return { fragments: count, files };
  }

  const pause = (ms = 200) => new Promise((r) => setTimeout(r, ms));

  /**
   * Waits (10 s at most) until no row is outside the full-text index and the table is
   * `fragments` fragments; the fragments last seen with nothing outside it (-1: never).
   */
  async function foldedInto(table: Table, fragments: number): Promise<number> {
    let folded = -1;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && folded !== fragments; await pause(100)) {
      await table.checkoutLatest();
      if ((await table.indexStats(TEXT_INDEX))?.numUnindexedRows === 0) folded = (await table.stats()).fragmentStats.numFragments;
    }
    return folded;
  }

  /** Searches `index` every 200 ms, as traffic goes on, until stopped. */
  const searchOn = (index: LanceSearchIndex) => {
    let on = true;
    const searches = (async () => {
      while (on) {
        await index.search({ query: "plover", collections: ["c"], filter: all, k: 50 });
        await pause();
      }
    })();
    return {
      stop: async () => {
        on = false;
        await searches;
      },
    };
  };

  /** A small load of `n`: four one-document commits. */
  const load = async (index: LanceSearchIndex, n: number) => {
    for (let i = 0; i < 4; i++) await index.indexDocuments([whole(doc(`d${n}-${i}`, `plover ${n} ${i}`))]);
  };

  it("removes the files of fragments its maintenance merged, without new writes", async () => {
    const dir = tempDir();
    const index = make({ dir, keepVersionsMs: 300, maintainEveryMs: 100 });
    await index.ping(); // the table is made as the index opens
    const db = await connect(dir);
    const table = await db.openTable("chunks");
    // Two loads, the first folded into the indexes before the second: two indexed fragments, which
    // the cleanup run after the second load's merges into one, with no write after it.
    await load(index, 0);
    expect(await settledFragments(table, dir, 1)).toEqual({ fragments: 1, files: 1 });
    await load(index, 1);
    expect(await settledFragments(table, dir, 1)).toEqual({ fragments: 1, files: 1 });
    table.close();
    db.close();
    expect(await index.search({ query: "plover", collections: ["c"], filter: all, k: 50 })).toHaveLength(8);
  });

  it("tidies (merges what a run left, removes what it replaced) once searches pause, or after tidyWithinMs", async () => {
    for (const tidyWithinMs of [60_000, 1_000]) {
      const dir = tempDir();
      const index = make({ dir, keepVersionsMs: 300, maintainEveryMs: 100, tidyWhenQuietMs: 1_500, tidyWithinMs });
      const searcher = make({ dir }); // another instance on the folder, as the API beside the worker
      await index.ping();
      const db = await connect(dir);
      const table = await db.openTable("chunks");
      const fragments = async () => {
        await table.checkoutLatest();
        return (await table.stats()).fragmentStats.numFragments;
      };
      await load(index, 0);
      expect(await settledFragments(table, dir, 1)).toEqual({ fragments: 1, files: 1 });
      const searching = searchOn(searcher);
      // The second load is folded in as writes pause, leaving two indexed fragments; merging them waits.
      await load(index, 1);
      const folded = await foldedInto(table, 2);
      const during: number[] = [];
      for (let i = 0; i < 15; i++) {
        await pause();
        during.push(await fragments());
      }
      // A delete leaves nothing to fold in: the run its pause calls for would only tidy, and waits too.
      await index.deleteDocument("c", "d1-0");
      const afterDelete: number[] = [];
      for (let i = 0; i < 10; i++) {
        await pause();
        afterDelete.push(await fragments());
      }
      await searching.stop();
      if (tidyWithinMs === 60_000) {
        expect(folded).toBe(2);
        expect(new Set([...during, ...afterDelete])).toEqual(new Set([2]));
      } else {
        // Searches went on, but the bound passed: merged while they ran.
        expect(during.at(-1)).toBe(1);
        expect(afterDelete.at(-1)).toBe(1);
      }
      expect(await settledFragments(table, dir, 1)).toEqual({ fragments: 1, files: 1 });
      table.close();
      db.close();
      expect(await searcher.search({ query: "plover", collections: ["c"], filter: all, k: 50 })).toHaveLength(7);
    }
  });

  it("removes what a merge replaced while searches go on: that run merges nothing, and does not wait for them", async () => {
    const dir = tempDir();
    const index = make({ dir, keepVersionsMs: 300, maintainEveryMs: 100, tidyWhenQuietMs: 1_500, tidyWithinMs: 60_000 });
    const searcher = make({ dir });
    await index.ping();
    const db = await connect(dir);
    const table = await db.openTable("chunks");
    await load(index, 0);
    expect(await settledFragments(table, dir, 1)).toEqual({ fragments: 1, files: 1 });
    const searching = searchOn(searcher);
    // The second load is folded in as writes pause, leaving two indexed fragments; a run asked
    // for merges them, and its old files stay until keepVersionsMs has passed.
    await load(index, 1);
    expect(await foldedInto(table, 2)).toBe(2);
    await index.maintain();
    await table.checkoutLatest();
    expect((await table.stats()).fragmentStats.numFragments).toBe(1);
    const dataFiles = () => readdirSync(path.join(dir, "chunks.lance", "data")).length;
    expect(dataFiles()).toBeGreaterThan(1);
    // Searches go on, and tidyWithinMs is a minute away: the run that only removes files does not wait.
    let files = dataFiles();
    for (const deadline = Date.now() + 8_000; Date.now() < deadline && files > 1; await pause()) files = dataFiles();
    await searching.stop();
    expect(files).toBe(1);
    table.close();
    db.close();
    expect(await searcher.search({ query: "plover", collections: ["c"], filter: all, k: 50 })).toHaveLength(8);
  });

  it("moves to a new connection after enough versions, closing the old one only when what uses it ends", async () => {
    const dir = tempDir();
    const writer = make({ dir, renewAfterVersions: 5, renewCheckMs: 20 });
    const reader = make({ dir, renewAfterVersions: 5, renewCheckMs: 20 });
    await writer.indexDocuments(Array.from({ length: 30 }, (_, i) => whole(doc(`d${i}`, `gannet ${i}`))));
    // A listing held open across the renewals: its connection stays open until it is read to the end.
    const scan = reader.scanDocuments({ collections: ["c"], filter: all, batch: 10 });
    const first = await scan.next();
    for (let i = 30; i < 60; i++) {
      await writer.indexDocuments([whole(doc(`d${i}`, `gannet ${i}`))]);
      expect((await reader.search({ query: "gannet", collections: ["c"], filter: all, k: 100 })).length).toBe(i + 1);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(writer.connections).toBeGreaterThan(1);
    expect(reader.connections).toBeGreaterThan(1);
    let listed = first.done ? 0 : first.value.length;
    for (let page = await scan.next(); !page.done; page = await scan.next()) listed += page.value.length;
    expect(listed).toBeGreaterThanOrEqual(30);
    expect((await writer.findDocuments({ collections: ["c"], filter: all, limit: 100, offset: 0 })).length).toBe(60);
  });

  it("lets several instances open a new directory at the same moment: one table, every index, nothing overwritten", async () => {
    for (let round = 0; round < 3; round++) {
      const dir = tempDir();
      const instances = [make({ dir }), make({ dir }), make({ dir })];
      await Promise.all(instances.map((index, i) => index.indexDocuments([whole(doc(`first${i}`, `curlew ${i}`))])));
      for (const index of instances) expect(await index.search({ query: "curlew", collections: ["c"], filter: all, k: 10 })).toHaveLength(3);
      const db = await connect(dir);
      const table = await db.openTable("chunks");
      expect((await table.listIndices()).length).toBeGreaterThanOrEqual(8);
      table.close();
      db.close();
    }
  });

  it("finds a small collection's matches among many better ones of a large collection", async () => {
    const index = make({ dir: tempDir() });
    const big = Array.from({ length: 300 }, (_, i) => whole(doc(`b${i}`, `shearwater shearwater shearwater ${i}`, 1, "big")));
    await index.indexDocuments([...big, whole(doc("s1", "one shearwater among many words here", 1, "small")), whole(doc("s2", "a shearwater too", 1, "small"))]);
    const hits = await index.search({ query: "shearwater", collections: ["small"], filter: all, k: 5 });
    expect(hits.map((h) => h.docId).sort()).toEqual(["s1", "s2"]);
    const both = await index.search({ query: "shearwater", collections: ["small", "big"], filter: all, k: 3 });
    expect(both.every((h) => h.collection === "big")).toBe(true);
  });

  it("checks vector dimensions, and keeps none when there are none", async () => {
    const dir = tempDir();
    const plain = make({ dir, dimensions: null });
    await plain.indexDocuments([whole(doc("d1", "kite"))]);
    await expect(plain.indexDocuments([{ doc: doc("d2", "kite"), chunks: [{ index: 0, text: "kite", start: 0, end: 4, vector: [1, 0, 0] }] }])).rejects.toThrow(/dimensional/);
    await plain.close();
    const vectors = make({ dir, dimensions: 3 });
    await vectors.indexDocuments([{ doc: doc("d2", "kite"), chunks: [{ index: 0, text: "kite", start: 0, end: 4, vector: [1, 0, 0] }] }]);
    const hits = await vectors.search({ query: "nothing", vector: [1, 0.1, 0], collections: ["c"], filter: all, k: 5 });
    expect(hits.map((h) => h.docId)).toEqual(["d2"]);
    await expect(vectors.search({ query: "kite", vector: [1, 0], collections: ["c"], filter: all, k: 5 })).rejects.toThrow(/dimensional/);
  });

  it("lets two instances on one directory write and see each other's writes", async () => {
    const dir = tempDir();
    const [a, b] = [make({ dir }), make({ dir })];
    await Promise.all([
      (async () => { for (let i = 0; i < 10; i++) await a.indexDocuments([whole(doc(`a${i}`, `egret from a ${i}`))]); })(),
      (async () => { for (let i = 0; i < 10; i++) await b.indexDocuments([whole(doc(`b${i}`, `egret from b ${i}`))]); })(),
    ]);
    for (const index of [a, b]) expect(await index.search({ query: "egret", collections: ["c"], filter: all, k: 50 })).toHaveLength(20);
    await b.deleteDocument("c", "a0");
    await a.deleteCollection("other");
    expect(await a.search({ query: "egret", collections: ["c"], filter: all, k: 50 })).toHaveLength(19);
  });

  it("leaves a new document once when two instances append it at the same time, and the newer of two versions", async () => {
    const dir = tempDir();
    const [a, b] = [make({ dir }), make({ dir })];
    await a.indexDocuments([whole(doc("seed", "seed row"))]); // the table exists before the race
    for (let round = 0; round < 5; round++) {
      const same = doc(`twin${round}`, `heron twin ${round}`);
      const older = doc(`pair${round}`, `ibis older ${round}`, 1);
      const newer = doc(`pair${round}`, `ibis newer ${round}`, 2);
      const [ra, rb] = await Promise.all([a.indexDocuments([whole(same), whole(older)]), b.indexDocuments([whole(same), whole(newer)])]);
      expect(rb[1]).toBe(true);
      expect(ra[1] === false || rb[1] === true).toBe(true);
    }
    const rows = await (await (await connect(dir)).openTable("chunks")).query().select(["id", "version", "text"]).toArray();
    const ids = rows.map((r) => String(r.id));
    expect(ids.length).toBe(new Set(ids).size);
    for (let round = 0; round < 5; round++) {
      const hits = await a.search({ query: "ibis", collections: ["c"], filter: parseFilter(""), k: 50 });
      expect(hits.filter((h) => h.docId === `pair${round}`).map((h) => h.text)).toEqual([`ibis newer ${round}`]);
      expect((await a.search({ query: `heron twin ${round}`, collections: ["c"], filter: all, k: 50 })).filter((h) => h.docId === `twin${round}`)).toHaveLength(1);
    }
  });

  it("as the sole writer, appends new documents and still replaces every one it holds, from before a restart too", async () => {
    const dir = tempDir();
    const rowsOf = async () =>
      (await (await (await connect(dir)).openTable("chunks")).query().select(["doc_id", "version", "text"]).toArray()).map((r) => `${r.doc_id}@${r.version}:${r.text}`).sort();
    const first = make({ dir, soleWriter: true });
    await first.indexDocuments([whole(doc("kept", "crane one")), whole(doc("again", "crane two"))]);
    // The same version once more (a job run twice, or a document deleted and loaded anew).
    await first.indexDocuments([whole(doc("again", "crane two, second run"))]);
    await first.close();
    const second = make({ dir, soleWriter: true });
    await second.indexDocuments([whole(doc("kept", "crane one, after restart")), whole(doc("new", "crane three"))]);
    await second.indexDocuments([whole(doc("again", "crane two, version 2", 2))]);
    await second.deleteDocument("c", "new");
    await second.indexDocuments([whole(doc("new", "crane three, loaded again"))]);
    expect(await rowsOf()).toEqual(["again@2:crane two, version 2", "kept@1:crane one, after restart", "new@1:crane three, loaded again"]);
  });

  it("finishes an inexact filter with the evaluator, fetching deeper until k pass", async () => {
    const index = make({ dir: tempDir() });
    // The two matches rank last by BM25, below a first round of candidates.
    const items = Array.from({ length: 120 }, (_, i) => {
      const match = i >= 118;
      const text = match ? `plover ${"filler ".repeat(30)}` : `plover plover ${i}`;
      return { ...whole({ ...doc(`d${i}`, text), metadata: { note: match ? `Alpha ${i}` : "beta" } }) };
    });
    await index.indexDocuments(items);
    const hits = await index.search({ query: "plover", collections: ["c"], filter: parseFilter("noteLIKEalph"), k: 5 });
    expect(hits.map((h) => h.docId).sort()).toEqual(["d118", "d119"]);
  });

  it("keeps a document's text once and gives it back whole", async () => {
    const text = "alpha beta. gamma delta.  epsilon";
    const chunks = [{ text: "alpha beta.", start: 0, end: 11 }, { text: "beta. gamma", start: 6, end: 17 }, { text: "epsilon", start: 26, end: 33 }];
    const rest = restOf(text, chunks);
    expect(JSON.parse(rest)).toEqual({ n: text.length, g: [[17, " delta.  "]] });
    expect(documentText(rest, chunks)).toBe(text);
    expect(JSON.parse(restOf(text, [{ text: "ALPHA", start: 0, end: 5 }]))).toEqual({ t: text });
    const index = make({ dir: tempDir() });
    await index.indexDocuments([{ doc: doc("d1", text), chunks: chunks.map((c, i) => ({ ...c, index: i })) }, { doc: doc("d2", ""), chunks: [] }]);
    const found = await index.findDocuments({ collections: ["c"], filter: all, limit: 10, offset: 0 });
    expect(found.map((d) => [d.docId, d.text])).toEqual([["d1", text], ["d2", ""]]);
  });

  it("finds documents whole whether their head row holds all of them or not, in order", async () => {
    const text = "alpha beta. gamma delta.  epsilon";
    const chunks = [{ text: "alpha beta.", start: 0, end: 11 }, { text: "beta. gamma", start: 6, end: 17 }, { text: "epsilon", start: 26, end: 33 }];
    expect(completeText(restOf(text, chunks), chunks.slice(0, 1))).toBeNull();
    expect(completeText(restOf(text, chunks), chunks)).toBe(text);
    const index = make({ dir: tempDir() });
    const withPriority = (d: IndexedDocument, priority: number) => ({ ...d, metadata: { priority } });
    await index.indexDocuments([
      { doc: withPriority(doc("several", text), 2), chunks: chunks.map((c, i) => ({ ...c, index: i })) },
      whole(withPriority(doc("one", "  one chunk, trimmed "), 1)),
      { doc: withPriority(doc("inexact", "Mixed Case"), 3), chunks: [{ index: 0, text: "mixed case", start: 0, end: 10 }] },
      { doc: withPriority(doc("none", "no chunks at all"), 4), chunks: [] },
    ]);
    const found = await index.findDocuments({ collections: ["c"], filter: parseFilter("ORDERBYpriority"), limit: 10, offset: 0 });
    expect(found.map((d) => [d.docId, d.text])).toEqual([["one", "  one chunk, trimmed "], ["several", text], ["inexact", "Mixed Case"], ["none", "no chunks at all"]]);
    const page = await index.findDocuments({ collections: ["c"], filter: parseFilter("ORDERBYDESCpriority"), limit: 2, offset: 1 });
    expect(page.map((d) => d.docId)).toEqual(["inexact", "several"]);
  });

  it("reads an ordered page by row ids, and sorts in the engine when a write between its two reads removed a row", async () => {
    const dir = tempDir();
    const index = make({ dir });
    const ranked = (i: number) => ({ ...doc(`d${i}`, `text ${i}`), metadata: { priority: i } });
    for (let i = 0; i < 20; i += 5) await index.indexDocuments([0, 1, 2, 3, 4].map((j) => whole(ranked(i + j))));
    const db = await connect(dir, { readConsistencyInterval: 0 });
    const table = await db.openTable("chunks");
    const request = { collections: ["c"], filter: parseFilter("ORDERBYDESCpriority"), limit: 5, offset: 2 };
    expect((await findHeads(table, request)).map((d) => d.docId)).toEqual(["d17", "d16", "d15", "d14", "d13"]);
    // The same table, but a replacement and a compaction land between the sort and the take.
    let raced = 0;
    const racing = new Proxy(table, {
      get(target, key) {
        if (key !== "takeRowIds") return (Reflect.get(target, key, target) as (...args: unknown[]) => unknown).bind(target);
        return (ids: bigint[]) => {
          let columns: string[] = [];
          const take = {
            select: (c: string[]) => ((columns = c), take),
            withRowId: () => take,
            toArray: async () => {
              raced++;
              await index.indexDocuments([whole({ ...ranked(15), version: 2, text: "text 15, replaced" })]);
              await index.maintain();
              return target.takeRowIds(ids).select(columns).withRowId().toArray();
            },
          };
          return take;
        };
      },
    }) as Table;
    const page = await findHeads(racing, request);
    expect(raced).toBe(1);
    expect(page.map((d) => [d.docId, d.text])).toEqual([["d17", "text 17"], ["d16", "text 16"], ["d15", "text 15, replaced"], ["d14", "text 14"], ["d13", "text 13"]]);
  });
});
