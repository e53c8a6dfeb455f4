/** LanceSearchIndex's maintenance, run by its scheduler: what it folds in, merges and removes, and when. */
import { readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { connect, type Table } from "@lancedb/lancedb";
import { all, doc, lanceIndexes, whole } from "../../test-support/lance-fixture.ts";
import { parseFilter } from "../filter/parse.ts";
import type { LanceSearchIndex } from "./lancedb.ts";
import { OutsideIndex } from "./lancedb-outside.ts";
import { TEXT_INDEX } from "./lancedb-table.ts";

const { tempDir, make } = lanceIndexes();

describe("LanceSearchIndex maintenance", () => {
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
    const put = (id: string, text: string, version: number, status: string) => ({
      doc: { ...doc(id, text, version), metadata: { status, priority: version }, sha256: `${id}-${version}` },
      chunks: [{ index: 0, text, start: 0, end: text.length }],
    });
    const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `d${String(from + i).padStart(2, "0")}`);
    await index.indexDocuments(ids(0, 40).map((id) => put(id, `heron ${id}`, 1, "open")));
    await index.maintain();
    const check = async (expected: Record<string, string[]>) => {
      for (const [query, docs] of Object.entries(expected)) {
        const [words, filterText] = query.split(" | ");
        const filter = parseFilter(filterText ?? "");
        const found = words
          ? (await index.search({ query: words, collections: ["c"], filter, k: 100 })).map((h) => h.docId)
          : (await index.findDocuments({ collections: ["c"], filter, limit: 100, offset: 0 })).map((d) => d.docId);
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
        heron: [...ids(0, 10), ...ids(25, 40)],
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

  describe("publish", () => {
    const unindexedIn = async (dir: string) => {
      const db = await connect(dir);
      const table = await db.openTable("chunks");
      const rows = (await table.indexStats(TEXT_INDEX))?.numUnindexedRows ?? -1;
      table.close();
      db.close();
      return rows;
    };
    const listedIn = (dir: string) => {
      const outside = new OutsideIndex(dir);
      try {
        return outside.list().rows;
      } finally {
        outside.close();
      }
    };
    const docs = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => ({ collection: "c", docId: `d${from + i}`, chunks: 1 }));
    const write = (index: LanceSearchIndex, from: number, count: number) =>
      index.indexDocuments(
        docs(from, count).map((d) => whole(doc(d.docId, `plover ${d.docId}`))),
        { deferred: true },
      );
    const found = async (index: LanceSearchIndex) =>
      (await index.search({ query: "plover", collections: ["c"], filter: all, k: 50 })).length;

    it("waits, while more than publishAtOnceRows rows are outside the index, until a run folded them in", async () => {
      const dir = tempDir();
      // A short rest: the pause after the writes starts the run that folds them in.
      const index = make({ dir, maintainEveryMs: 200, publishAtOnceRows: 5 });
      await write(index, 0, 20);
      expect(await unindexedIn(dir)).toBe(20);
      // Deferred and not yet published: searches read the index alone, which lacks them.
      expect(await found(index)).toBe(0);
      await index.publish(docs(0, 20));
      expect(await unindexedIn(dir)).toBe(0);
      expect(listedIn(dir)).toBe(0);
      expect(await found(index)).toBe(20);
    });

    it("lists them at once while publishAtOnceRows rows or fewer are outside the index; a run clears the list", async () => {
      const dir = tempDir();
      // The timer would look in a minute, and the pause after the writes in 1 s.
      const index = make({ dir, maintainEveryMs: 60_000, publishAtOnceRows: 5 });
      await write(index, 0, 5);
      await index.publish(docs(0, 5));
      expect(await unindexedIn(dir)).toBe(5);
      expect(listedIn(dir)).toBe(5);
      expect(await found(index)).toBe(5);
      await index.maintain();
      expect(listedIn(dir)).toBe(0);
      expect(await found(index)).toBe(5);
    });

    it("counts a run that started before it was asked only if a later one ran, or lists them", async () => {
      const dir = tempDir();
      // The pause after the last write starts a run that folds in what the first one left.
      const index = make({ dir, maintainEveryMs: 60_000, publishAtOnceRows: 0 });
      await write(index, 0, 3);
      const running = index.maintain();
      await write(index, 3, 3); // committed beside the run: its index update may take them, or not
      const published = index.publish(docs(0, 6));
      await running;
      await published;
      expect((await unindexedIn(dir)) === 0 || listedIn(dir) === 6).toBe(true);
      expect(await found(index)).toBe(6);
    });

    it("lists them after waitForIndexMs, once told not to wait, at close, and at once without a timer", async () => {
      const dir = tempDir();
      // Runs only when asked: none may come.
      const unmaintained = make({ dir, publishAtOnceRows: 0 });
      await write(unmaintained, 0, 3);
      await unmaintained.publish(docs(0, 3));
      expect(listedIn(dir)).toBe(3);
      expect(await found(unmaintained)).toBe(3);
      await unmaintained.close();
      // The timer would look in a minute, and writes' pause starts no run: the rest after one lasts.
      const index = make({ dir, maintainEveryMs: 60_000, publishAtOnceRows: 0, waitForIndexMs: 300 });
      await write(index, 3, 1);
      const started = Date.now();
      await index.publish(docs(3, 1));
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(listedIn(dir)).toBe(4);
      const now = new AbortController();
      await write(index, 4, 1);
      const told = index.publish(docs(4, 1), now.signal);
      now.abort();
      await told;
      await write(index, 5, 1);
      const waiting = index.publish(docs(5, 1));
      await index.close();
      await waiting;
      expect(await unindexedIn(dir)).toBe(6);
      expect(listedIn(dir)).toBe(6);
      expect(await found(make({ dir }))).toBe(6);
    });

    it("scans every row outside the index in a folder written before the list, until a run folds them in", async () => {
      const dir = tempDir();
      const before = make({ dir });
      await write(before, 0, 4); // deferred: in the table, outside the index, listed nowhere
      await before.close();
      for (const f of readdirSync(dir)) if (f.startsWith("outside-index.sqlite")) rmSync(path.join(dir, f));
      const index = make({ dir, maintainEveryMs: 100 });
      expect(await found(index)).toBe(4);
      for (const deadline = Date.now() + 10_000; Date.now() < deadline && (await unindexedIn(dir)) !== 0; )
        await new Promise((r) => setTimeout(r, 50));
      expect(await unindexedIn(dir)).toBe(0);
      expect(readdirSync(dir)).toContain("outside-index.sqlite");
      expect(await found(index)).toBe(4);
      // From now on deferred rows are found once published.
      await write(index, 4, 2);
      expect(await found(index)).toBe(4);
    });

    it("scans every row outside the index once the list passes searchListedRows", async () => {
      const dir = tempDir();
      const index = make({ dir, searchListedRows: 2 });
      await write(index, 0, 3);
      expect(await found(index)).toBe(0);
      // Written not deferred: listed at once, past the bound, so the whole tail is scanned.
      await index.indexDocuments([whole(doc("d3", "plover d3")), whole(doc("d4", "plover d4"))]);
      expect(listedIn(dir)).toBe(2);
      expect(await found(index)).toBe(2);
      await index.indexDocuments([whole(doc("d5", "plover d5"))]);
      expect(await found(index)).toBe(6);
    });
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
});
