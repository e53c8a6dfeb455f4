import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connect, type Session } from "@lancedb/lancedb";
import { Schema } from "apache-arrow";
import { parseFilter } from "../filter/parse.ts";
import type { IndexedDocument } from "../ports.ts";
import { LanceSearchIndex } from "./lancedb.ts";
import { rowsTable } from "./lancedb-arrow.ts";
import { HIT_COLUMN, TABLE_NAME, documentRows, hitJson, parseHit, tableSchema } from "./lancedb-rows.ts";
import { LAYOUT_KEY, openChunkTable, reopenChunkTable, TABLE_LAYOUT, tableLayout, type OpenTable } from "./lancedb-table.ts";
import { ConfigError } from "../errors.ts";

const dirs: string[] = [];
const tables: OpenTable[] = [];
afterEach(() => {
  for (const t of tables.splice(0)) {
    t.table.close();
    t.db.close();
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A table of `n` indexed documents, written and maintained by an index instance that is then closed. */
async function filledDir(n: number): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "docstore-lance-cache-"));
  dirs.push(dir);
  const index = new LanceSearchIndex({ dir, dimensions: null, maintainEveryMs: 0 });
  const docs = Array.from({ length: n }, (_, i) => {
    const text = `gannet ${i} colony ${i % 7} shearwater ${i % 13}`;
    return {
      doc: { collection: "c", docId: `d${i}`, version: 1, metadata: { status: i % 2 ? "open" : "closed" }, text },
      chunks: [{ index: 0, text, start: 0, end: text.length }],
    };
  });
  await index.indexDocuments(docs);
  await index.maintain();
  await index.close();
  return dir;
}

async function searchOn(opened: OpenTable): Promise<number> {
  return (await opened.table.query().fullTextSearch("gannet colony").where("m_status = 'open'").limit(10).toArray()).length;
}

describe("the chunk table's caches", () => {
  // LanceDB 0.39 drops a Session given as connect()'s third argument: the connection then keeps
  // a session of its own, with the 6 GB and 1 GB defaults, and the one made here stays empty.
  it("are the session made with the configured bound; a reopened connection has one of its own", async () => {
    const dir = await filledDir(300);
    const sessions: Session[] = [];
    const opened = await openChunkTable(dir, null, 64 * 1024 * 1024, (s) => sessions.push(s));
    tables.push(opened);
    expect(sessions).toHaveLength(1);
    expect(await searchOn(opened)).toBe(10);
    expect(sessions[0]!.approxNumItems()).toBeGreaterThan(0);
    expect(Number(sessions[0]!.sizeBytes())).toBeGreaterThan(0);
    const reopened = await reopenChunkTable(opened);
    tables.push(reopened);
    expect(sessions).toHaveLength(2);
    expect(sessions[1]).not.toBe(sessions[0]);
    expect(reopened.cacheBytes).toBe(opened.cacheBytes);
    const opening = sessions[1]!.approxNumItems(); // the table's manifest and schema
    expect(await searchOn(reopened)).toBe(10);
    expect(sessions[1]!.approxNumItems()).toBeGreaterThan(opening);
  });

  it("stay within the bound: the same searches cache more than it on a roomier session", async () => {
    const dir = await filledDir(2_000);
    let roomy: Session | undefined;
    let small: Session | undefined;
    tables.push(await openChunkTable(dir, null, 64 * 1024 * 1024, (s) => (roomy = s)));
    const bound = 64 * 1024;
    tables.push(await openChunkTable(dir, null, bound, (s) => (small = s)));
    for (let i = 0; i < 5; i++) {
      for (const opened of tables) expect(await searchOn(opened)).toBe(10);
    }
    expect(Number(roomy!.sizeBytes())).toBeGreaterThan(bound);
    expect(Number(small!.sizeBytes())).toBeLessThanOrEqual(bound);
  });
});

describe("a new chunk table", () => {
  it("is of the current layout: a compaction moves its rows to new addresses, and its indexes follow them", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "docstore-lance-rowid-"));
    dirs.push(dir);
    const index = new LanceSearchIndex({ dir, dimensions: null, maintainEveryMs: 0 });
    const rowIds = async () => {
      const opened = await openChunkTable(dir, null, 64 * 1024 * 1024);
      tables.push(opened);
      const rows = (await opened.table.query().withRowId().select(["id"]).toArray()) as { id: string; _rowid: bigint }[];
      return { ids: new Map(rows.map((r) => [r.id, r._rowid])), fragments: (await opened.table.stats()).fragmentStats.numFragments };
    };
    try {
      for (let batch = 0; batch < 3; batch++) {
        await index.indexDocuments(
          Array.from({ length: 5 }, (_, i) => {
            const text = `gannet ${batch} ${i}`;
            return {
              doc: { collection: "c", docId: `d${batch}-${i}`, version: 1, metadata: {}, text },
              chunks: [{ index: 0, text, start: 0, end: text.length }],
            };
          }),
        );
      }
      const before = await rowIds();
      expect(before.fragments).toBe(3);
      await index.maintain();
      const after = await rowIds();
      expect(after.fragments).toBe(1);
      expect([...after.ids.keys()].sort()).toEqual([...before.ids.keys()].sort());
      expect([...after.ids].filter(([id, rowId]) => before.ids.get(id) === rowId).length).toBeLessThan(before.ids.size);
      const opened = await openChunkTable(dir, null, 64 * 1024 * 1024);
      tables.push(opened);
      expect(opened.layout).toBe(TABLE_LAYOUT);
      expect(await tableLayout(opened.table)).toBe(TABLE_LAYOUT);
      expect((await index.search({ query: "gannet", collections: ["c"], filter: parseFilter(""), k: 20 })).length).toBe(15);
    } finally {
      await index.close();
    }
  });
});

describe("a table of another layout (the table's schema version)", () => {
  const text = "petrel colony";
  const rows = documentRows(
    { collection: "c", docId: "a", version: 1, metadata: {}, text },
    [{ index: 0, text, start: 0, end: text.length }],
    null,
    "w",
  );

  /** A table as a docstore of `layout` made it: 1 has stable row ids and no mark. */
  async function madeWith(layout: number): Promise<string> {
    const dir = mkdtempSync(path.join(tmpdir(), "docstore-lance-layout-"));
    dirs.push(dir);
    const db = await connect(dir);
    const schema = layout === 1 ? tableSchema(null) : tableSchema(null, new Map([[LAYOUT_KEY, String(layout)]]));
    const table = await db.createEmptyTable(TABLE_NAME, schema, {
      mode: "create",
      storageOptions: { newTableEnableStableRowIds: layout === 1 ? "true" : "false" },
    });
    await table.add(rowsTable(rows, schema));
    table.close();
    db.close();
    return dir;
  }

  it("opens an older layout as it is, and searches it", async () => {
    const dir = await madeWith(1);
    const opened = await openChunkTable(dir, null, 64 * 1024 * 1024);
    tables.push(opened);
    expect(opened.layout).toBe(1);
    expect(await tableLayout(opened.table)).toBe(1);
    const index = new LanceSearchIndex({ dir, dimensions: null, maintainEveryMs: 0 });
    try {
      expect((await index.search({ query: "petrel", collections: ["c"], filter: parseFilter(""), k: 10 })).map((h) => h.docId)).toEqual([
        "a",
      ]);
    } finally {
      await index.close();
    }
  });

  it("refuses a newer layout with a ConfigError, writing nothing to the table", async () => {
    const dir = await madeWith(TABLE_LAYOUT + 1);
    const db = await connect(dir);
    const before = await (await db.openTable(TABLE_NAME)).version();
    const refused = await openChunkTable(dir, null, 64 * 1024 * 1024).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toBe(
      `${dir}: the search index was written by a newer docstore (table layout ${TABLE_LAYOUT + 1}; this one knows up to ${TABLE_LAYOUT}); ` +
        "run that version or a later one, or point DATA_DIR at another folder",
    );
    const index = new LanceSearchIndex({ dir, dimensions: null, maintainEveryMs: 0 });
    await expect(index.search({ query: "petrel", collections: ["c"], filter: parseFilter(""), k: 10 })).rejects.toThrow(ConfigError);
    await index.close();
    const table = await db.openTable(TABLE_NAME);
    expect(await table.version()).toBe(before);
    expect(await table.listIndices()).toEqual([]);
    table.close();
    db.close();
  });
});

describe("a table made before the hit column", () => {
  it("gets it on opening, made from each row's columns: its documents are found as before, and new writes go in", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "docstore-lance-hit-"));
    dirs.push(dir);
    const doc = (docId: string, text: string, metadata: IndexedDocument["metadata"]): IndexedDocument => ({
      collection: "c",
      docId,
      version: 1,
      metadata,
      text,
    });
    const older = new Schema(tableSchema(null).fields.filter((f) => f.name !== HIT_COLUMN));
    const rows = [
      ...documentRows(
        doc("a", "petrel colony. petrel gannet", { status: "open", priority: 2, note: 'a "quoted" \\ value' }),
        [
          { index: 0, text: "petrel colony.", start: 0, end: 14, citation: { page: 3 } },
          { index: 1, text: "petrel gannet", start: 15, end: 28 },
        ],
        null,
        "w",
      ),
      ...documentRows(
        doc("b", "no petrel here", { status: "closed", tags: ["x", "y"] }),
        [{ index: 0, text: "no petrel here", start: 0, end: 14 }],
        null,
        "w",
      ),
    ].map(({ hit: _, ...row }) => row);
    const db = await connect(dir);
    const table = await db.createEmptyTable(TABLE_NAME, older);
    await table.add(rowsTable(rows, older));
    table.close();
    db.close();

    const opened = await openChunkTable(dir, null, 64 * 1024 * 1024);
    tables.push(opened);
    const stored = (await opened.table.query().select(["id", "char_start", "char_end", "cite", "metadata", HIT_COLUMN]).toArray()) as {
      id: string;
      char_start: number;
      char_end: number;
      cite: string | null;
      metadata: string;
      hit: string;
    }[];
    expect(stored).toHaveLength(3);
    for (const r of stored) expect(parseHit(r.hit)).toEqual(parseHit(hitJson(r.id, r.char_start, r.char_end, r.cite, r.metadata)));

    const index = new LanceSearchIndex({ dir, dimensions: null, maintainEveryMs: 0 });
    try {
      const hits = await index.search({ query: "petrel", collections: ["c"], filter: parseFilter(""), k: 10 });
      expect(hits.map((h) => [h.docId, h.chunkIndex, h.start, h.end, h.text]).sort()).toEqual([
        ["a", 0, 0, 14, "petrel colony."],
        ["a", 1, 15, 28, "petrel gannet"],
        ["b", 0, 0, 14, "no petrel here"],
      ]);
      const first = hits.find((h) => h.docId === "a" && h.chunkIndex === 0)!;
      expect(first.citation).toEqual({ page: 3 });
      expect(first.metadata).toEqual({ status: "open", priority: 2, note: 'a "quoted" \\ value' });
      expect(hits.find((h) => h.docId === "b")!.metadata).toEqual({ status: "closed", tags: ["x", "y"] });
      expect(hits.find((h) => h.docId === "a" && h.chunkIndex === 1)!.citation).toBeUndefined();
      // Written to after: a new document, a new version of one, maintenance.
      const text = "petrel shearwater";
      await index.indexDocuments([
        { doc: doc("c", text, { status: "open" }), chunks: [{ index: 0, text, start: 0, end: text.length }] },
        {
          doc: { ...doc("b", text, { status: "open", priority: 1 }), version: 2 },
          chunks: [{ index: 0, text, start: 0, end: text.length, citation: { page: 9 } }],
        },
      ]);
      await index.maintain();
      const after = await index.search({ query: "shearwater", collections: ["c"], filter: parseFilter("status=open"), k: 10 });
      expect(after.map((h) => [h.docId, h.metadata, h.citation]).sort()).toEqual([
        ["b", { status: "open", priority: 1 }, { page: 9 }],
        ["c", { status: "open" }, undefined],
      ]);
    } finally {
      await index.close();
    }
  });
});
