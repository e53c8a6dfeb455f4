import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "@lancedb/lancedb";
import { parseFilter } from "../filter/parse.ts";
import { LanceSearchIndex } from "./lancedb.ts";
import { TABLE_NAME } from "./lancedb-rows.ts";
import { Tombstones, hiddenBy, type Tombstone } from "./lancedb-tombstones.ts";

const all = parseFilter("", new Date());
const dirs: string[] = [];
const open: LanceSearchIndex[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "docstore-tombstones-"));
  dirs.push(dir);
  return dir;
}
/** An instance on `dir`, as one process on a shared DATA_DIR would hold it. */
function instance(dir: string): LanceSearchIndex {
  const index = new LanceSearchIndex({ dir, dimensions: null, maintainEveryMs: 0 });
  open.push(index);
  return index;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((i) => i.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const item = (docId: string, text: string, version = 1, collection = "c") => ({
  doc: { collection, docId, version, metadata: { n: docId }, text },
  chunks: [{ index: 0, text, start: 0, end: text.length }],
});

/** Holds the folder's application lock, as a process applying tombstones does, until released. */
function holdLock(dir: string): () => void {
  const lock = new Database(path.join(dir, "tombstones-lock.sqlite"));
  lock.exec("BEGIN IMMEDIATE");
  return () => {
    lock.exec("ROLLBACK");
    lock.close();
  };
}

/** Two processes on one folder, the writer having indexed `items`, and the lock held by a third. */
async function twoProcessesLocked(items: ReturnType<typeof item>[]) {
  const dir = tempDir();
  const writer = instance(dir);
  const api = instance(dir);
  await writer.indexDocuments(items);
  return { dir, writer, api, release: holdLock(dir) };
}

/** The rows the table holds for a document, read directly (what no tombstone hides). */
async function rowsOf(dir: string, docId: string): Promise<number> {
  const db = await connect(dir);
  try {
    const table = await db.openTable(TABLE_NAME);
    return await table.countRows(`doc_id = '${docId}'`);
  } finally {
    db.close();
  }
}

async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 25))) if (await check()) return true;
  return check();
}

/** The tombstones waiting in `dir`, read on a connection of their own, closed after. */
function waiting(dir: string): Tombstone[] {
  const tombstones = new Tombstones(dir);
  try {
    return tombstones.pending();
  } finally {
    tombstones.close();
  }
}

const ids = async (index: LanceSearchIndex, query: string) =>
  (await index.search({ query, collections: ["c"], filter: all, k: 10 })).map((h) => h.docId).sort();

describe("deletions answered before they reach the table", () => {
  it("answers while another process applies deletions, hides the document from every read, then applies it", async () => {
    const { dir, writer, api, release } = await twoProcessesLocked([item("d1", "kestrel hovering"), item("d2", "kestrel nesting")]);
    try {
      // The lock is held for as long as the test wants: the answer cannot be waiting for it.
      await api.deleteDocument("c", "d1");
      expect(await rowsOf(dir, "d1")).toBe(1);
      for (const reader of [writer, api]) {
        expect(await ids(reader, "kestrel")).toEqual(["d2"]);
        expect((await reader.findDocuments({ collections: ["c"], filter: all, limit: 10, offset: 0 })).map((d) => d.docId)).toEqual(["d2"]);
        expect(await reader.documentChunks("c", "d1")).toBeNull();
        const inventory = [];
        for await (const batch of reader.inventory({ collection: "c" }, 10)) inventory.push(...batch.map((e) => e.docId));
        expect(inventory).toEqual(["d2"]);
      }
    } finally {
      release();
    }
    expect(await eventually(async () => (await rowsOf(dir, "d1")) === 0)).toBe(true);
    expect(waiting(dir)).toEqual([]);
    expect(await ids(api, "kestrel")).toEqual(["d2"]);
  });

  it("keeps a document loaded again after its deletion, whichever process applies the deletion", async () => {
    const { dir, writer, api, release } = await twoProcessesLocked([item("d1", "osprey old text"), item("d2", "osprey other")]);
    await api.deleteDocument("c", "d1");
    // The load again (version 1 again, as the catalog gives it) waits for the lock to apply the
    // deletion before it writes; the API's own application, queued meanwhile, then finds nothing.
    const reload = writer.indexDocuments([item("d1", "osprey new text")]);
    await new Promise((r) => setTimeout(r, 200));
    release();
    expect(await reload).toEqual([true]);
    expect(await eventually(async () => waiting(dir).length === 0)).toBe(true);
    await api.close();
    const hits = await writer.search({ query: "osprey", collections: ["c"], filter: all, k: 10 });
    expect(hits.map((h) => [h.docId, h.text]).sort()).toEqual([
      ["d1", "osprey new text"],
      ["d2", "osprey other"],
    ]);
  });

  it("hides a deleted collection at once, and keeps what is loaded into it afterwards", async () => {
    const dir = tempDir();
    const index = instance(dir);
    await index.indexDocuments([item("d1", "plover shore"), item("e1", "plover dune", 1, "other")]);
    const release = holdLock(dir);
    await index.deleteCollection("c");
    expect(await index.search({ query: "plover", collections: ["c", "other"], filter: all, k: 10 })).toEqual([
      expect.objectContaining({ collection: "other", docId: "e1" }),
    ]);
    const reload = index.indexDocuments([item("d9", "plover again")]);
    release();
    await reload;
    expect(await eventually(async () => (await rowsOf(dir, "d1")) === 0)).toBe(true);
    expect(await ids(index, "plover")).toEqual(["d9"]);
  });

  it("applies the deletions a process answered and did not apply before it stopped", async () => {
    const dir = tempDir();
    const first = instance(dir);
    await first.indexDocuments([item("d1", "heron wading"), item("d2", "heron fishing")]);
    await first.close();
    // As a process that died right after answering: the tombstone is there, the rows too.
    const stopped = new Tombstones(dir);
    stopped.add("c", "d2");
    stopped.close();
    expect(await rowsOf(dir, "d2")).toBe(1);
    const next = instance(dir);
    expect(await ids(next, "heron")).toEqual(["d1"]);
    expect(await eventually(async () => (await rowsOf(dir, "d2")) === 0)).toBe(true);
  });

  it("says what reads hide, as a condition and as a test", () => {
    const hidden = hiddenBy([
      { id: 1, collection: "c", docId: "a'b" },
      { id: 2, collection: "k", docId: null },
    ])!;
    expect(hidden.sql).toBe("NOT (((collection = 'c' AND doc_id IN ('a''b')) OR collection = 'k'))");
    expect([hidden.has("c", "a'b"), hidden.has("c", "x"), hidden.has("k", "anything")]).toEqual([true, false, true]);
    expect(hiddenBy([])).toBeNull();
  });
});
