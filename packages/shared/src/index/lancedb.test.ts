import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { connect, type Table } from "@lancedb/lancedb";
import { describeIndexContract } from "../../test-support/index-contract.ts";
import { describeIndexModel, reopening } from "../../test-support/index-model.ts";
import { all, doc, lanceIndexes, whole } from "../../test-support/lance-fixture.ts";
import { parseFilter } from "../filter/parse.ts";
import type { IndexedDocument } from "../ports.ts";
import { LanceSearchIndex, type LanceIndexOptions } from "./lancedb.ts";
import { findHeads } from "./lancedb-read.ts";
import { TABLE_NAME, completeText, documentText, restOf, tableSchema } from "./lancedb-rows.ts";

// Maintenance is tested in lancedb-maintenance.test.ts, the connection's renewal in lancedb-connection.test.ts.
const { tempDir, make } = lanceIndexes();

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
function modelFixture(before?: (dir: string) => Promise<void>, options: Partial<LanceIndexOptions> = {}) {
  return async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "docstore-lance-model-"));
    await before?.(dir);
    return reopening(() => new LanceSearchIndex({ dir, dimensions: null, maintainEveryMs: 0, ...options }), {
      maintain: (index) => index.maintain(),
      cleanup: () => rmSync(dir, { recursive: true, force: true }),
    });
  };
}

describeIndexModel("LanceDB", modelFixture(), 40);

// Maintenance on its timer as well, and short bounds: a deferred load's publish waits for a run
// or lists the documents, and searches scan the listed rows, or every row outside the index once
// more than 60 are listed.
describeIndexModel(
  "LanceDB, maintaining itself, documents published",
  modelFixture(undefined, { maintainEveryMs: 100, publishAtOnceRows: 20, searchListedRows: 60, waitForIndexMs: 2_000 }),
  12,
);

// A table of layout 1: stable row ids, no layout mark. Its full-text index is built again after a
// compaction commits, and a search in between may come back short: none is made during a run.
describeIndexModel(
  "LanceDB, a table made before layout 2",
  modelFixture(async (dir) => {
    const db = await connect(dir);
    const table = await db.createEmptyTable(TABLE_NAME, tableSchema(null), {
      mode: "create",
      storageOptions: { newTableEnableStableRowIds: "true" },
    });
    table.close();
    db.close();
  }),
  10,
  { searchDuringMaintenance: false },
);

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

  it("lets several instances open a new directory at the same moment: one table, every index, nothing overwritten", async () => {
    for (let round = 0; round < 3; round++) {
      const dir = tempDir();
      const instances = [make({ dir }), make({ dir }), make({ dir })];
      await Promise.all(instances.map((index, i) => index.indexDocuments([whole(doc(`first${i}`, `curlew ${i}`))])));
      for (const index of instances)
        expect(await index.search({ query: "curlew", collections: ["c"], filter: all, k: 10 })).toHaveLength(3);
      const db = await connect(dir);
      const table = await db.openTable("chunks");
      expect((await table.listIndices()).length).toBeGreaterThanOrEqual(9);
      table.close();
      db.close();
    }
  });

  it("finds a small collection's matches among many better ones of a large collection", async () => {
    const index = make({ dir: tempDir() });
    const big = Array.from({ length: 300 }, (_, i) => whole(doc(`b${i}`, `shearwater shearwater shearwater ${i}`, 1, "big")));
    await index.indexDocuments([
      ...big,
      whole(doc("s1", "one shearwater among many words here", 1, "small")),
      whole(doc("s2", "a shearwater too", 1, "small")),
    ]);
    const hits = await index.search({ query: "shearwater", collections: ["small"], filter: all, k: 5 });
    expect(hits.map((h) => h.docId).sort()).toEqual(["s1", "s2"]);
    const both = await index.search({ query: "shearwater", collections: ["small", "big"], filter: all, k: 3 });
    expect(both.every((h) => h.collection === "big")).toBe(true);
  });

  it("checks vector dimensions, and keeps none when there are none", async () => {
    const dir = tempDir();
    const plain = make({ dir, dimensions: null });
    await plain.indexDocuments([whole(doc("d1", "kite"))]);
    await expect(
      plain.indexDocuments([{ doc: doc("d2", "kite"), chunks: [{ index: 0, text: "kite", start: 0, end: 4, vector: [1, 0, 0] }] }]),
    ).rejects.toThrow(/dimensional/);
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
      (async () => {
        for (let i = 0; i < 10; i++) await a.indexDocuments([whole(doc(`a${i}`, `egret from a ${i}`))]);
      })(),
      (async () => {
        for (let i = 0; i < 10; i++) await b.indexDocuments([whole(doc(`b${i}`, `egret from b ${i}`))]);
      })(),
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
      expect(
        (await a.search({ query: `heron twin ${round}`, collections: ["c"], filter: all, k: 50 })).filter(
          (h) => h.docId === `twin${round}`,
        ),
      ).toHaveLength(1);
    }
  });

  it("as the sole writer, appends new documents and still replaces every one it holds, from before a restart too", async () => {
    const dir = tempDir();
    const rowsOf = async () =>
      (await (await (await connect(dir)).openTable("chunks")).query().select(["doc_id", "version", "text"]).toArray())
        .map((r) => `${r.doc_id}@${r.version}:${r.text}`)
        .sort();
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

  /** A text its chunks do not cover: they overlap, and skip " delta.  " between them. */
  const SPARSE = {
    text: "alpha beta. gamma delta.  epsilon",
    chunks: [
      { text: "alpha beta.", start: 0, end: 11 },
      { text: "beta. gamma", start: 6, end: 17 },
      { text: "epsilon", start: 26, end: 33 },
    ],
  };

  it("keeps a document's text once and gives it back whole", async () => {
    const { text, chunks } = SPARSE;
    const rest = restOf(text, chunks);
    expect(JSON.parse(rest)).toEqual({ n: text.length, g: [[17, " delta.  "]] });
    expect(documentText(rest, chunks)).toBe(text);
    expect(JSON.parse(restOf(text, [{ text: "ALPHA", start: 0, end: 5 }]))).toEqual({ t: text });
    const index = make({ dir: tempDir() });
    await index.indexDocuments([
      { doc: doc("d1", text), chunks: chunks.map((c, i) => ({ ...c, index: i })) },
      { doc: doc("d2", ""), chunks: [] },
    ]);
    const found = await index.findDocuments({ collections: ["c"], filter: all, limit: 10, offset: 0 });
    expect(found.map((d) => [d.docId, d.text])).toEqual([
      ["d1", text],
      ["d2", ""],
    ]);
  });

  it("finds documents whole whether their head row holds all of them or not, in order", async () => {
    const { text, chunks } = SPARSE;
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
    expect(found.map((d) => [d.docId, d.text])).toEqual([
      ["one", "  one chunk, trimmed "],
      ["several", text],
      ["inexact", "Mixed Case"],
      ["none", "no chunks at all"],
    ]);
    const page = await index.findDocuments({ collections: ["c"], filter: parseFilter("ORDERBYDESCpriority"), limit: 2, offset: 1 });
    expect(page.map((d) => d.docId)).toEqual(["inexact", "several"]);
  });

  it("sorts in the engine by a column it does not return once indexes hold every row", async () => {
    // LanceDB fails to plan such a sort when scalar indexes answer the whole `where`
    // (collection, head and status are indexed): the sorted columns are read too.
    const index = make({ dir: tempDir() });
    const tied = (i: number) => ({ ...doc(`d${i}`, `text ${i}`), metadata: { priority: i % 3, status: "open" } });
    await index.indexDocuments(Array.from({ length: 9 }, (_, i) => whole(tied(i))));
    await index.maintain();
    const expected = ["d2", "d5", "d8", "d1", "d4", "d7", "d0", "d3", "d6"];
    for (const text of ["ORDERBYDESCpriority", "status=open^ORDERBYDESCpriority"]) {
      const filter = parseFilter(text);
      // A page whose edge cuts a run of equal priorities: sorted in the engine, texts and all.
      const page = await index.findDocuments({ collections: ["c"], filter, limit: 4, offset: 1 });
      expect(page.map((d) => d.docId)).toEqual(expected.slice(1, 5));
      const scanned: string[] = [];
      for await (const batch of index.scanDocuments({ collections: ["c"], filter, batch: 4 })) scanned.push(...batch.map((d) => d.docId));
      expect(scanned).toEqual(expected);
    }
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
            select: (c: string[]) => {
              columns = c;
              return take;
            },
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
    expect(page.map((d) => [d.docId, d.text])).toEqual([
      ["d17", "text 17"],
      ["d16", "text 16"],
      ["d15", "text 15, replaced"],
      ["d14", "text 14"],
      ["d13", "text 13"],
    ]);
  });
});
