/**
 * The rows of the LanceDB chunk table: one per chunk, every collection in one table, each row
 * carrying its document's version and metadata (filter/lancedb-columns.ts) so filters apply to chunks
 * before ranking.
 *
 * Text is stored about once. Each chunk row holds its chunk's text (the BM25 index needs it);
 * the document's first row (`head`) also holds `doc_rest`: only the parts of the document that
 * no chunk covers (`{"n": length, "g": [[start, text], ...]}`), from which `documentText`
 * rebuilds the whole text. When the chunks are not exact slices of the text at their offsets,
 * `doc_rest` holds the whole text instead (`{"t": text}`). A document without chunks gets one
 * placeholder head row (chunk -1, empty text) so that it can still be found.
 */
import { Bool, Field, FixedSizeList, Float32, Int32, Int64, Schema, Utf8 } from "apache-arrow";
import type { ChunkInput, IndexedDocument } from "../ports.ts";
import { DimensionMismatchError } from "../errors.ts";
import type { Metadata } from "../domain/metadata.ts";
import { metadataColumns, metadataFields } from "../filter/lancedb-columns.ts";

export const TABLE_NAME = "chunks";

export function vectorType(dimensions: number): FixedSizeList {
  return new FixedSizeList(dimensions, new Field("item", new Float32(), true));
}

export function tableSchema(dimensions: number | null, metadata?: Map<string, string>): Schema {
  const field = (name: string, type: ConstructorParameters<typeof Field>[1], nullable = false) => new Field(name, type, nullable);
  return new Schema(
    [
      field("id", new Utf8()),
      field("collection", new Utf8()),
      field("doc_id", new Utf8()),
      field("version", new Int64()),
      field("sha256", new Utf8(), true),
      // A random id of the write that made the row: duplicates left by two writers racing are
      // told apart by it (see settleRaces in lancedb-write.ts).
      field("writer", new Utf8()),
      field("chunk", new Int32()),
      field("head", new Bool()),
      field("char_start", new Int32()),
      field("char_end", new Int32()),
      field("text", new Utf8()),
      field("cite", new Utf8(), true),
      field("doc_rest", new Utf8(), true),
      // What a search hit needs, in one column (see hitJson): each column a query returns is one
      // more read of every hit's row.
      field(HIT_COLUMN, new Utf8()),
      ...metadataFields(),
      ...(dimensions === null ? [] : [field("vector", vectorType(dimensions), true)]),
    ],
    metadata,
  );
}

/**
 * The schema to write `stored`'s rows with: tableSchema's fields, in the order of the table's
 * own columns. The table's schema object comes from LanceDB's copy of apache-arrow, whose types
 * this module's Arrow builders do not recognise; the names are what the two share.
 */
export function writeSchema(stored: { fields: readonly { name: string }[] }, dimensions: number | null): Schema {
  const ours = new Map(tableSchema(dimensions).fields.map((f) => [f.name, f]));
  return new Schema(
    stored.fields.map(({ name }) => {
      const field = ours.get(name);
      if (!field) throw new Error(`the chunk table has a column docstore does not write: ${name}`);
      return field;
    }),
  );
}

export const HIT_COLUMN = "hit";

/**
 * A row's `hit`: `[id, char_start, char_end, cite, metadata]` as JSON, from the row's own
 * columns (id, cite and metadata are JSON already). hitSql makes the same from a row's columns
 * (for tables made before the column was), or with new metadata (a metadata update).
 */
export function hitJson(id: string, start: number, end: number, cite: string | null, metadata: string): string {
  return `[${id},${start},${end},${cite ?? "null"},${metadata}]`;
}

export function hitSql(metadataSql = "metadata"): string {
  return `concat('[', id, ',', CAST(char_start AS VARCHAR), ',', CAST(char_end AS VARCHAR), ',', coalesce(cite, 'null'), ',', ${metadataSql}, ']')`;
}

/** A hit's parts, read from its `hit`. */
export function parseHit(hit: string): {
  key: { collection: string; docId: string; chunk: number };
  start: number;
  end: number;
  cite: Record<string, unknown> | null;
  metadata: Metadata;
} {
  const [[collection, docId, chunk], start, end, cite, metadata] = JSON.parse(hit) as [
    [string, string, number],
    number,
    number,
    Record<string, unknown> | null,
    Metadata,
  ];
  return { key: { collection, docId, chunk }, start, end, cite, metadata };
}

/** Deterministic and unambiguous: a new version's chunk i replaces the old chunk i in place. */
export function chunkId(collection: string, docId: string, index: number): string {
  return JSON.stringify([collection, docId, index]);
}

/** Vectors of another length than the index holds (or any vector, when it keeps none). */
export function indexDimensionMismatch(stored: number | null, given: number): DimensionMismatchError {
  return stored === null
    ? new DimensionMismatchError(
        `the index keeps no vectors (no EMBEDDING_DIMENSIONS) but was given ${given}-dimensional vectors`,
        0,
        given,
      )
    : DimensionMismatchError.fromIndex(stored, given);
}

export type Row = Record<string, unknown>;

export function documentRows(doc: IndexedDocument, chunks: readonly ChunkInput[], dimensions: number | null, writer: string): Row[] {
  for (const c of chunks) if (c.vector && c.vector.length !== dimensions) throw indexDimensionMismatch(dimensions, c.vector.length);
  const meta = metadataColumns(doc.metadata);
  const sorted = [...chunks].sort((a, b) => a.index - b.index);
  const parts = sorted.length > 0 ? sorted : [{ index: -1, text: "", start: 0, end: 0 }];
  return parts.map((c: ChunkInput, i) => {
    const id = chunkId(doc.collection, doc.docId, c.index);
    const cite = c.citation && Object.keys(c.citation).length > 0 ? JSON.stringify(c.citation) : null;
    return {
      id,
      collection: doc.collection,
      doc_id: doc.docId,
      version: BigInt(doc.version),
      sha256: doc.sha256 ?? null,
      writer,
      chunk: c.index,
      head: i === 0,
      char_start: c.start,
      char_end: c.end,
      text: c.text,
      cite,
      doc_rest: i === 0 ? restOf(doc.text, sorted) : null,
      [HIT_COLUMN]: hitJson(id, c.start, c.end, cite, meta.metadata as string),
      ...meta,
      ...(dimensions === null ? {} : { vector: c.vector ?? null }),
    };
  });
}

interface Piece {
  text: string;
  start: number;
}

/** What the head row keeps besides the chunks to give back the whole text. */
export function restOf(text: string, chunks: readonly Pick<ChunkInput, "text" | "start" | "end">[]): string {
  const exact = chunks.every(
    (c) => Number.isInteger(c.start) && c.start >= 0 && c.end <= text.length && text.slice(c.start, c.end) === c.text,
  );
  if (exact) {
    const gaps: [number, string][] = [];
    let at = 0;
    for (const c of [...chunks].sort((a, b) => a.start - b.start)) {
      if (c.start > at) gaps.push([at, text.slice(at, c.start)]);
      at = Math.max(at, c.end);
    }
    if (at < text.length) gaps.push([at, text.slice(at)]);
    const rest = JSON.stringify({ n: text.length, g: gaps });
    if (documentText(rest, chunks) === text) return rest;
  }
  return JSON.stringify({ t: text });
}

/** What restOf keeps: the whole text, or its length and the gaps between chunks. */
type Rest = { t: string } | { n: number; g: [number, string][] };

/** The whole text from `rest` and `chunks`, or null when they leave part of it out (some chunks missing). */
export function completeText(rest: string, chunks: readonly Pick<ChunkInput, "text" | "start">[]): string | null {
  const parsed = JSON.parse(rest) as Rest;
  const text = joined(parsed, chunks);
  return "t" in parsed || text.length === parsed.n ? text : null;
}

/** The whole text from the head row's `doc_rest` and the document's chunks. */
export function documentText(rest: string, chunks: readonly Pick<ChunkInput, "text" | "start">[]): string {
  return joined(JSON.parse(rest) as Rest, chunks);
}

function joined(parsed: Rest, chunks: readonly Pick<ChunkInput, "text" | "start">[]): string {
  if ("t" in parsed) return parsed.t;
  const pieces: Piece[] = [...chunks.map((c) => ({ text: c.text, start: c.start })), ...parsed.g.map(([start, t]) => ({ text: t, start }))];
  pieces.sort((a, b) => a.start - b.start);
  let out = "";
  let at = 0;
  for (const p of pieces) {
    const end = p.start + p.text.length;
    if (p.start > at) break; // a hole: cannot happen for a rest made by restOf
    if (end > at) {
      out += p.text.slice(at - p.start);
      at = end;
    }
  }
  return out;
}
