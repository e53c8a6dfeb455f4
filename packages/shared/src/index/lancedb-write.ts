/**
 * Writing documents' versions to the chunk table, within one of this instance's serial writes
 * (lancedb-serial.ts): which items are accepted, the append of new documents and the merge that
 * replaces held ones, and the settling of races with writers in other processes.
 */
import { randomUUID } from "node:crypto";
import type { Table } from "@lancedb/lancedb";
import type { IndexedDocument } from "../ports.ts";
import { sqlString } from "../filter/lancedb.ts";
import { metadataColumns } from "../filter/lancedb-columns.ts";
import { rowsTable } from "./lancedb-arrow.ts";
import { documentsWhere } from "./lancedb-read.ts";
import { HIT_COLUMN, chunkId, documentRows, hitSql, writeSchema } from "./lancedb-rows.ts";
import type { OutsideDocument } from "./lancedb-outside.ts";
import type { Tombstone } from "./lancedb-tombstones.ts";
import { acceptInOrder, keyOf, newestVersions, type DocumentKey, type IndexItem } from "./versions.ts";

/** Told of each commit a write makes, with the rows it wrote (maintenance counts them). */
export type Committed = (rows?: number) => void;

/** Told, after the commit that wrote them, of the documents a write made visible (LanceSearchIndex lists them: lancedb-outside.ts). */
export type Listed = (docs: OutsideDocument[]) => void;

export interface WriteContext {
  vectorSize: number | null;
  /** The sole writer's record of the documents the table may hold; null when other writers may race (then races are settled). */
  held: HeldKeys | null;
  committed: Committed;
  /** Null for a deferred write: its documents are published later. */
  listed: Listed | null;
}

/** Writes the items' accepted versions (acceptInOrder); answers which were accepted. */
export async function writeDocuments(
  table: Table,
  items: IndexItem[],
  { vectorSize, held, committed, listed }: WriteContext,
): Promise<boolean[]> {
  const keys = held ? await held.of(table) : null;
  const current = await indexedVersions(
    table,
    items.map((i) => i.doc).filter((d) => keys === null || keys.has(keyHash(d))),
  );
  const indexed = new Set(current.keys());
  // As if applied one by one (acceptInOrder): the last accepted item of each document is written.
  const { accepted, latest: chosen } = acceptInOrder(items, current);
  if (chosen.length === 0) return accepted;
  for (const { doc } of chosen) keys?.add(keyHash(doc));
  const writer = randomUUID();
  // The documents the index does not hold yet are appended, one commit for all of them, and
  // each appears whole: an append reads nothing, where a merge reads every fragment (its cost
  // grows with them: docs/benchmarks.md). Another writer may append the same document, or
  // another version of it, at the same moment: settleRaces then leaves one copy of the newest
  // (a merge would not prevent that either: LanceDB does not see two inserts of one id as a
  // conflict). The documents it holds are replaced by the merge.
  const fresh = chosen.filter((item) => !indexed.has(keyOf(item.doc)));
  const replacing = chosen.filter((item) => indexed.has(keyOf(item.doc)));
  // Columns as the table has them; read once for the append and the merge alike.
  const schema = writeSchema(await table.schema(), vectorSize);
  if (fresh.length > 0) {
    const rows = fresh.flatMap(({ doc, chunks }) => documentRows(doc, chunks, vectorSize, writer));
    await table.add(rowsTable(rows, schema));
    committed(rows.length);
    listed?.(fresh.map(outsideOf));
  }
  if (replacing.length > 0) {
    const rows = replacing.flatMap(({ doc, chunks }) => documentRows(doc, chunks, vectorSize, writer));
    // Old rows of these documents that the new version does not overwrite are deleted in the
    // same commit; the version guards keep a newer version another process committed meanwhile.
    const stale = replacing.map(
      ({ doc }) => `(collection = ${sqlString(doc.collection)} AND doc_id = ${sqlString(doc.docId)} AND version <= ${doc.version})`,
    );
    await table
      .mergeInsert("id")
      .whenMatchedUpdateAll({ where: "target.version <= source.version" })
      .whenNotMatchedInsertAll()
      .whenNotMatchedBySourceDelete({ where: stale.join(" OR ") })
      .execute(rowsTable(rows, schema));
    committed(rows.length);
    listed?.(replacing.map(outsideOf));
  }
  if (!held) await settleRaces(table, chosen, accepted, items, committed);
  return accepted;
}

/** A document written, with its rows (a document without chunks has one, its head). */
const outsideOf = ({ doc, chunks }: IndexItem): OutsideDocument => ({
  collection: doc.collection,
  docId: doc.docId,
  rows: Math.max(1, chunks.length),
});

/**
 * Another writer may have committed a version of a document between our version check and
 * our commit. A newer one: our merge kept its rows but added our chunks beyond its count;
 * the older rows are removed. The same one: two merges (or appends) of the same new rows both
 * inserted them (LanceDB does not see that conflict); the rows of every writer but the one
 * with the smallest id are removed, which every writer that sees the duplicates decides alike,
 * so the deletes commute and the last writer to settle leaves one copy. These second commits
 * are the only moments a reader could see a document twice.
 */
async function settleRaces(
  table: Table,
  chosen: IndexItem[],
  accepted: boolean[],
  items: IndexItem[],
  committed: Committed,
): Promise<void> {
  const rows = (await table
    .query()
    .where(String(documentsWhere(chosen.map((i) => i.doc))))
    .select(["id", "collection", "doc_id", "version", "writer"])
    .toArray()) as { id: string; collection: string; doc_id: string; version: bigint; writer: string }[];
  const versions = Map.groupBy(rows, (r) => keyOf({ collection: r.collection, docId: r.doc_id }));
  for (const [key, group] of versions) {
    const max = group.reduce((m, r) => (r.version > m ? r.version : m), group[0]!.version);
    const { collection, doc_id: docId } = group[0]!;
    const scope = `collection = ${sqlString(collection)} AND doc_id = ${sqlString(docId)}`;
    if (group.some((r) => r.version !== max)) {
      await table.delete(`${scope} AND version < ${max}`);
      committed();
      items.forEach((item, i) => {
        if (keyOf(item.doc) === key && BigInt(item.doc.version) < max) accepted[i] = false;
      });
    }
    const current = group.filter((r) => r.version === max);
    if (new Set(current.map((r) => r.id)).size === current.length) continue;
    const keep = current.reduce((m, r) => (r.writer < m ? r.writer : m), current[0]!.writer);
    await table.delete(`${scope} AND version = ${max} AND writer <> ${sqlString(keep)}`);
    committed();
  }
}

/**
 * A sole writer's record of every document the table may hold: hashes of their keys, read
 * from the table once, then added before each write (deletes leave them: a superset). A
 * document whose hash is absent is surely new, and skips the version lookup, which costs more
 * than the append itself once many rows wait for maintenance (they are scanned, not looked up).
 */
export class HeldKeys {
  #held: Promise<Set<number>> | null = null;

  of(table: Table): Promise<Set<number>> {
    this.#held ??= (async () => {
      const held = new Set<number>();
      for await (const batch of table.query().where("head = true").select(["collection", "doc_id"])) {
        const collections = batch.getChild("collection")!;
        const docIds = batch.getChild("doc_id")!;
        for (let i = 0; i < batch.numRows; i++)
          held.add(keyHash({ collection: collections.get(i) as string, docId: docIds.get(i) as string }));
      }
      return held;
    })();
    this.#held.catch(() => (this.#held = null)); // read again by the next write
    return this.#held;
  }
}

/** The indexed version of each of these documents that has one, read from their head rows. */
async function indexedVersions(table: Table, docs: DocumentKey[]): Promise<Map<string, number>> {
  if (docs.length === 0) return new Map();
  // A head row is chunk 0, or the placeholder -1 of a document without chunks: exact lookups
  // in the id's B-tree, cheaper than matching the documents' other rows too.
  const ids = docs.flatMap((d) => [chunkId(d.collection, d.docId, 0), chunkId(d.collection, d.docId, -1)]);
  const rows = (await table
    .query()
    .where(`id IN (${[...new Set(ids)].map(sqlString).join(", ")}) AND head = true`)
    .select(["collection", "doc_id", "version"])
    .toArray()) as { collection: string; doc_id: string; version: bigint }[];
  return newestVersions(rows.map((r) => ({ collection: r.collection, docId: r.doc_id, version: Number(r.version) })));
}

/** SearchIndex.refreshDocument on the table: the new version and metadata on every row of the version held, in one update. */
export async function refreshVersion(
  table: Table,
  doc: Omit<IndexedDocument, "text"> & { sha256: string },
  committed: Committed,
  listed: Listed | null,
): Promise<number | null> {
  const scope = `collection = ${sqlString(doc.collection)} AND doc_id = ${sqlString(doc.docId)}`;
  const rows = (await table.query().where(scope).select(["version", "sha256", "chunk"]).toArray()) as {
    version: bigint;
    sha256: string | null;
    chunk: number;
  }[];
  const version = rows[0]?.version;
  if (version === undefined || rows.some((r) => r.version !== version || r.sha256 !== doc.sha256) || Number(version) > doc.version)
    return null;
  // One update of every row of that version: atomic, and a no-op if the version changed.
  const values = Object.fromEntries(Object.entries(metadataColumns(doc.metadata)).map(([column, v]) => [column, sqlValue(v)]));
  const valuesSql = { ...values, [HIT_COLUMN]: hitSql(values.metadata), version: String(doc.version) };
  const { rowsUpdated } = await table.update({ where: `${scope} AND version = ${version}`, valuesSql });
  committed();
  listed?.([{ collection: doc.collection, docId: doc.docId, rows: rows.length }]);
  return rowsUpdated === rows.length ? rows.filter((r) => r.chunk >= 0).length : null;
}

/** Selects the tombstones that delete any of these documents (theirs, or their collection's). */
export function concerning(docs: readonly DocumentKey[]): (pending: Tombstone[]) => Tombstone[] {
  const collections = new Set(docs.map((d) => d.collection));
  const keys = new Set(docs.map(keyOf));
  return (pending) =>
    pending.filter(
      (t) => collections.has(t.collection) && (t.docId === null || keys.has(keyOf({ collection: t.collection, docId: t.docId }))),
    );
}

/** FNV-1a of a document's key, in 31 bits (a small integer to V8). Two keys may share a hash: that only costs a lookup. */
function keyHash({ collection, docId }: DocumentKey): number {
  let h = 0x811c9dc5;
  const mix = (s: string) => {
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  };
  mix(collection);
  h = Math.imul(h ^ 0x1f, 0x01000193);
  mix(docId);
  return h >>> 1;
}

function sqlValue(v: unknown): string {
  if (v === null) return "NULL";
  if (typeof v === "string") return sqlString(v);
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  if (Array.isArray(v))
    return v.length === 0 ? "arrow_cast(make_array(), 'List(Utf8)')" : `[${v.map((x) => sqlString(String(x))).join(", ")}]`;
  throw new Error(`no SQL literal for ${typeof v}`);
}
