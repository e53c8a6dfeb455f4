/**
 * Searches and document look-ups on the chunk table. The filter is a `where` LanceDB applies
 * before ranking (its prefilter, the default for full-text and vector queries); when the
 * compiled filter is only a superset, candidates are checked with the reference evaluator and
 * more are fetched, four times deeper a round, until enough pass or none are left.
 */
import { MatchQuery, Operator, type Table } from "@lancedb/lancedb";
import type {
  DocumentChunks,
  FindRequest,
  IndexEntry,
  IndexedDocument,
  InventoryScope,
  ScanRequest,
  SearchHit,
  SearchRequest,
} from "../ports.ts";
import type { Metadata } from "../domain/metadata.ts";
import { compareCodePoints } from "../filter/compare.ts";
import { evaluate } from "../filter/evaluate.ts";
import { compareForOrder } from "../filter/order.ts";
import { and, compileToLanceWhere, or, sqlString } from "../filter/lancedb.ts";
import { KNOWN_COLUMN, isKnownField } from "../filter/lancedb-columns.ts";
import { queryTerms } from "../search/query-terms.ts";
import { DEFAULT_FUSION, RRF_K, reciprocalRankFusion, type HybridFusion } from "../search/fusion.ts";
import type { OutsideList } from "./lancedb-outside.ts";
import type { Hidden } from "./lancedb-tombstones.ts";
import { HIT_COLUMN, chunkId, completeText, documentText, indexDimensionMismatch, parseHit } from "./lancedb-rows.ts";
import { fetchUntilKept, firstDepth } from "./deeper.ts";
import { docKey, type DocumentKey } from "./versions.ts";

/**
 * What a hit needs: its `hit` (key, offsets, citation and metadata in one column, see hitJson)
 * and its text. Each column a query returns is another read of every hit's row (docs/benchmarks.md).
 */
const HIT_COLUMNS = [HIT_COLUMN, "text"];

interface HitRow {
  hit: string;
  text: string;
  _score?: number;
  _distance?: number;
}

type ChunkRow = ReturnType<typeof parseHit> & { text: string; _score?: number; _distance?: number };

/** Plain objects: each field of an Arrow row is decoded again whenever it is read. */
const chunkRows = (rows: HitRow[]): ChunkRow[] =>
  rows.map((r) => ({ ...parseHit(r.hit), text: r.text, _score: r._score, _distance: r._distance }));

/** Rows of the given documents (an OR of one IN list per collection). */
export function documentsWhere(docs: readonly DocumentKey[]): string | boolean {
  const byCollection = Map.groupBy(docs, (d) => d.collection);
  return or(
    [...byCollection].map(
      ([c, ds]) => `(collection = ${sqlString(c)} AND doc_id IN (${[...new Set(ds.map((d) => sqlString(d.docId)))].join(", ")}))`,
    ),
  );
}

const inCollections = (collections: readonly string[]) => `collection IN (${[...new Set(collections)].map(sqlString).join(", ")})`;

const asWhere = (sql: string | boolean) => (sql === true ? "true" : sql === false ? "false" : sql);

/**
 * `hidden`: documents whose deletion is answered but not yet applied to the table (see
 * lancedb-tombstones.ts); their rows are left out as the evaluator's rejects are, fetching deeper.
 *
 * `outside`: the documents whose rows may lie outside the full-text index (lancedb-outside.ts).
 * The full-text ranking is then the index's alone (fastSearch), merged with a second ranking of
 * only those documents' rows (LanceDB scans what its index lacks, after the `where`: milliseconds
 * for a few hundred rows); the same row found by both counts once. Null: the search scans every
 * row outside the index, as LanceDB does by default (the list is too long to be cheaper).
 */
export async function searchChunks(
  table: Table,
  request: SearchRequest,
  vectorSize: number | null,
  fusion: HybridFusion = DEFAULT_FUSION,
  hidden: Hidden | null = null,
  outside: OutsideList | null = null,
): Promise<SearchHit[]> {
  if (request.collections.length === 0 || request.k < 1) return [];
  const compiled = compileToLanceWhere(request.filter);
  // With no condition but the collections, the search runs unfiltered and the collections are
  // checked after, fetching deeper until k pass: the same answer (a chunk's BM25 score does not
  // depend on the filter), without handing the full-text search an allow-list of nearly every
  // row, which keeps it from pruning (docs/benchmarks.md).
  let scopeOnly = compiled.where === null;
  let where = scopeOnly ? null : asWhere(and([inCollections(request.collections), compiled.where ?? true]));
  if (where === "false") return [];
  const inScope = new Set(request.collections);
  const terms = queryTerms(request.query);
  if (request.vector && vectorSize !== null && request.vector.length !== vectorSize)
    throw indexDimensionMismatch(vectorSize, request.vector.length);
  const rankers: ((limit: number) => Promise<ChunkRow[]>)[] = [];
  const weights: number[] = [];
  if (terms.length > 0) {
    weights.push(fusion.lexicalWeight);
    const match = new MatchQuery(terms.join(" "), "text", { operator: Operator.Or });
    const rank = async (fast: boolean, within: string | null, limit: number) => {
      const query = fast ? table.query().fullTextSearch(match).fastSearch() : table.query().fullTextSearch(match);
      return chunkRows(
        await (within ? query.where(within) : query)
          .select([...HIT_COLUMNS, "_score"])
          .limit(limit)
          .toArray(),
      );
    };
    const listed = outside === null ? null : documentsWhere(outside.docs.filter((d) => inScope.has(d.collection)));
    rankers.push(async (limit) => {
      if (listed === null) return rank(false, where, limit);
      if (listed === false) return rank(true, where, limit);
      const [indexed, scanned] = await Promise.all([rank(true, where, limit), rank(false, asWhere(and([where ?? true, listed])), limit)]);
      return byScore(indexed, scanned, limit);
    });
  }
  const vector = request.vector;
  if (vector && vectorSize !== null) {
    weights.push(fusion.denseWeight);
    rankers.push(async (limit) => {
      const query = table.query().nearestTo(vector).column("vector").distanceType("cosine");
      return chunkRows(
        await (where ? query.where(where) : query)
          .select([...HIT_COLUMNS, "_distance"])
          .limit(limit)
          .toArray(),
      );
    });
  }
  if (rankers.length === 0) return [];
  const k = request.k;
  const want = rankers.length === 1 ? k : Math.max(k, fusion.depth);
  const keep = (row: ChunkRow) =>
    inScope.has(row.key.collection) &&
    !hidden?.has(row.key.collection, row.key.docId) &&
    (compiled.exact || evaluate(request.filter, row.metadata));
  // Exact in the engine: one round. Otherwise rows are checked here, and more are fetched
  // until `want` pass or none are left.
  const engineExact = compiled.exact && hidden === null;
  let exact = engineExact && !scopeOnly;
  // An unfiltered first round asks for no more than it needs: when the collections searched are
  // the whole table (as often), it is the only round, and asking for more slows every search.
  const kept = await fetchUntilKept({
    want,
    first: firstDepth(want, exact || scopeOnly),
    fetch: (limit) => Promise.all(rankers.map((rank) => rank(limit))),
    keep: (lists) => lists.map((l) => l.filter(keep)),
    final: () => exact,
    deeper: (limit) => {
      if (!scopeOnly || limit < 4 * want) return limit * 4;
      // The collections hold few of the best matches (a small collection in a large table):
      // let the engine filter them first after all, in one more, exact round.
      where = asWhere(inCollections(request.collections));
      scopeOnly = false;
      exact = engineExact;
      return exact ? want : limit * 4;
    },
  });
  if (kept.length === 1) return kept[0]!.slice(0, k).map((row) => hitOf(row, row._score ?? 1 - (row._distance ?? 1)));
  return reciprocalRankFusion(kept, ({ key }) => chunkId(key.collection, key.docId, key.chunk), RRF_K, weights)
    .slice(0, k)
    .map(({ item, score }) => hitOf(item, score));
}

/** The best `limit` rows of two rankings by score, each row once (the first ranking's first, in a tie). */
function byScore(a: ChunkRow[], b: ChunkRow[], limit: number): ChunkRow[] {
  if (b.length === 0) return a;
  const seen = new Set<string>();
  return [...a, ...b]
    .sort((x, y) => (y._score ?? 0) - (x._score ?? 0))
    .filter(({ key }) => {
      const id = chunkId(key.collection, key.docId, key.chunk);
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    })
    .slice(0, limit);
}

function hitOf(row: ChunkRow, score: number): SearchHit {
  return {
    collection: row.key.collection,
    docId: row.key.docId,
    chunkIndex: row.key.chunk,
    text: row.text,
    start: row.start,
    end: row.end,
    score,
    metadata: row.metadata,
    ...(row.cite ? { citation: row.cite as SearchHit["citation"] } : {}),
  };
}

interface HeadRow {
  collection: string;
  doc_id: string;
}

/** The heads (one row per document) that match: its `where`, and how to order them. */
function headsQuery(request: Pick<FindRequest, "collections" | "filter">, hidden: Hidden | null) {
  const compiled = compileToLanceWhere(request.filter);
  const where = asWhere(and([inCollections(request.collections), "head = true", compiled.where ?? true, hidden?.sql ?? true]));
  // LanceDB sorts in the engine, reading only the columns it sorts by, and agrees with
  // compareForOrder on the known fields' typed columns: one type each, strings by UTF-8
  // bytes (code point order, as compareCodePoints), a missing value (null) last either way.
  const inEngine = compiled.exact && request.filter.orderBy.every((t) => isKnownField(t.field));
  const order = [
    ...request.filter.orderBy.map((t) => ({
      columnName: KNOWN_COLUMN[t.field as keyof typeof KNOWN_COLUMN],
      ascending: !t.descending,
      nullsFirst: false,
    })),
    { columnName: "collection", ascending: true, nullsFirst: false },
    { columnName: "doc_id", ascending: true, nullsFirst: false },
  ];
  return { where, exact: compiled.exact, order: inEngine ? order : null };
}

/** ORDERBY follows compareForOrder (types ranked, arrays by their first item): every match sorted here, without texts. */
async function sortedHeads(table: Table, where: string, exact: boolean, filter: FindRequest["filter"]): Promise<HeadRow[]> {
  const rows = (await table.query().where(where).select(["collection", "doc_id", "metadata"]).toArray()) as (HeadRow & {
    metadata: string;
  })[];
  return rows
    .map((r) => ({ r, m: JSON.parse(r.metadata) as Metadata }))
    .filter(({ m }) => exact || evaluate(filter, m))
    .sort(
      (a, b) =>
        compareForOrder(a.m, b.m, filter.orderBy) ||
        compareCodePoints(a.r.collection, b.r.collection) ||
        compareCodePoints(a.r.doc_id, b.r.doc_id),
    )
    .map(({ r }) => r);
}

const keyOf = (r: HeadRow): DocumentKey => ({ collection: r.collection, docId: r.doc_id });

/** `hidden`: documents whose deletion is answered but not yet applied (lancedb-tombstones.ts), left out. */
export async function findHeads(table: Table, request: FindRequest, hidden: Hidden | null = null): Promise<IndexedDocument[]> {
  if (request.collections.length === 0 || request.limit < 1) return [];
  const { where, exact, order } = headsQuery(request, hidden);
  if (where === "false") return [];
  if (!order) {
    const page = (await sortedHeads(table, where, exact, request.filter)).slice(request.offset, request.offset + request.limit);
    return page.length === 0 ? [] : readDocuments(table, page.map(keyOf));
  }
  // The head rows with their text: a document of one chunk (most small ones) is whole in its
  // head row, so only the documents of several chunks take a second read.
  const heads =
    (await pageByRowIds(table, where, order.slice(0, request.filter.orderBy.length), request.offset, request.limit)) ??
    ((await table
      .query()
      .where(where)
      .orderBy(order)
      .offset(request.offset)
      .limit(request.limit)
      .select(withSorted(TEXT_COLUMNS, order))
      .toArray()) as TextRow[]);
  const whole = heads.map((head) => documentOf(head, [head]));
  const parts = heads.filter((_, i) => whole[i] === null).map(keyOf);
  const read = parts.length === 0 ? [] : await readDocuments(table, parts);
  const byKey = new Map(read.map((d) => [docKey(d.collection, d.docId), d]));
  return heads.flatMap((head, i) => {
    const doc = whole[i] ?? byKey.get(docKey(head.collection, head.doc_id));
    return doc ? [doc] : [];
  });
}

type Order = { columnName: string; ascending: boolean; nullsFirst: boolean }[];

/**
 * `columns` and the columns a query sorts by: LanceDB (0.39) fails to plan a sort by a column not
 * selected when scalar indexes answer the whole `where` ("TakeExec requires the input plan to
 * have a column named '_rowaddr' or '_rowid'").
 */
const withSorted = (columns: readonly string[], order: Order) => [...new Set([...columns, ...order.map((o) => o.columnName)])];

/**
 * The page of head rows [offset, offset + limit) in the order of `terms` then collection and
 * doc_id, read as bare LanceDB does: the engine sorts the matches by the terms' columns alone,
 * without their collection, doc_id and texts, then the page's rows are taken by row id (less of
 * LanceDB's CPU than its sort with every column: docs/benchmarks.md). Null when that
 * cannot give the page exactly: no terms, a run of equal sort values across either edge of the
 * page (collection and doc_id would order it, and they were not read), or a row gone between the
 * two reads (a row id names a row of one fragment: a delete or a compaction made meanwhile
 * leaves it out of the take, never another row in its place). The caller then sorts in the
 * engine as before.
 */
async function pageByRowIds(table: Table, where: string, terms: Order, offset: number, limit: number): Promise<TextRow[] | null> {
  if (terms.length === 0) return null;
  const end = offset + limit;
  const sorted = await table
    .query()
    .where(where)
    .orderBy(terms)
    .limit(end + 1)
    .select([...new Set(terms.map((t) => t.columnName))])
    .withRowId()
    .toArrow();
  const n = sorted.numRows;
  if (n <= offset) return []; // an empty answer has no columns
  const columns = terms.map((t) => sorted.getChild(t.columnName)!);
  // Known fields' columns are strings, int64 (bigint) and int8: `===` is the engine's equality.
  const same = (i: number, j: number) => columns.every((c) => c.get(i) === c.get(j));
  if ((offset > 0 && same(offset - 1, offset)) || (n > end && same(end - 1, end))) return null;
  // The page's row ids, each with its run of equal sort values (whole within the page).
  const ids = sorted.getChild("_rowid")!.toArray() as BigUint64Array;
  const run = new Map<bigint, number>();
  for (let i = offset, r = 0; i < Math.min(n, end); i++) {
    if (i > offset && !same(i - 1, i)) r++;
    run.set(ids[i]!, r);
  }
  // takeRowIds answers in row id order, without the ids it lacks.
  const rows = (await table
    .takeRowIds([...run.keys()])
    .select(TEXT_COLUMNS)
    .withRowId()
    .toArray()) as (TextRow & { _rowid: bigint })[];
  if (rows.length !== run.size) return null;
  const ranked = rows.map((row) => ({ row, run: run.get(row._rowid)! }));
  ranked.sort(
    (a, b) => a.run - b.run || compareCodePoints(a.row.collection, b.row.collection) || compareCodePoints(a.row.doc_id, b.row.doc_id),
  );
  return ranked.map(({ row }) => row);
}

/**
 * Every match in findHeads' order, `batch` documents at a time. Sorted in the engine, the ids
 * stream from LanceDB as they are read; otherwise every match's id and metadata (never its
 * text) are held while sorting. Texts are read one batch at a time, when the consumer asks.
 */
export async function* scanHeads(table: Table, request: ScanRequest, hidden: Hidden | null = null): AsyncGenerator<IndexedDocument[]> {
  if (request.collections.length === 0) return;
  const { where, exact, order } = headsQuery(request, hidden);
  if (where === "false") return;
  const size = Math.max(1, request.batch);
  let keys: DocumentKey[] = [];
  const flush = async () => {
    const docs = keys.length === 0 ? [] : await readDocuments(table, keys);
    keys = [];
    return docs;
  };
  if (order) {
    for await (const batch of table
      .query()
      .where(where)
      .orderBy(order)
      .select(withSorted(["collection", "doc_id"], order))) {
      for (const row of batch.toArray() as unknown as HeadRow[]) {
        keys.push(keyOf(row));
        if (keys.length >= size) yield await flush();
      }
    }
  } else {
    for (const row of await sortedHeads(table, where, exact, request.filter)) {
      keys.push(keyOf(row));
      if (keys.length >= size) yield await flush();
    }
  }
  const rest = await flush();
  if (rest.length > 0) yield rest;
}

interface TextRow {
  collection: string;
  doc_id: string;
  version: bigint | number;
  chunk: number;
  head: boolean;
  char_start: number;
  text: string;
  doc_rest: string | null;
  metadata: string;
}

const TEXT_COLUMNS = ["collection", "doc_id", "version", "chunk", "head", "char_start", "text", "doc_rest", "metadata"];

/**
 * The document of a head row, its text rebuilt from `rows` (its rows: the chunks of the head's
 * version are taken). Unless `partial`, null when they do not cover all of it (chunks not read).
 */
function documentOf(head: TextRow, rows: readonly TextRow[], partial = false): IndexedDocument | null {
  if (head.doc_rest === null) return null;
  const chunks = rows
    .filter((r) => r.version === head.version && Number(r.chunk) >= 0)
    .map((r) => ({ text: r.text, start: Number(r.char_start) }));
  const text = partial ? documentText(head.doc_rest, chunks) : completeText(head.doc_rest, chunks);
  return text === null
    ? null
    : {
        collection: head.collection,
        docId: head.doc_id,
        version: Number(head.version),
        metadata: JSON.parse(head.metadata) as Metadata,
        text,
      };
}

/** The documents whole, in the order given; one read of all their rows. */
async function readDocuments(table: Table, docs: DocumentKey[]): Promise<IndexedDocument[]> {
  const rows = (await table
    .query()
    .where(asWhere(documentsWhere(docs)))
    .select(TEXT_COLUMNS)
    .toArray()) as TextRow[];
  const byDoc = Map.groupBy(rows, (r) => docKey(r.collection, r.doc_id));
  return docs.flatMap(({ collection, docId }) => {
    const all = byDoc.get(docKey(collection, docId)) ?? [];
    const head = all.find((r) => r.head);
    const doc = head ? documentOf(head, all, true) : null;
    return doc ? [doc] : [];
  });
}

interface StoredRow {
  version: bigint | number;
  chunk: number;
  head: boolean;
  char_start: number;
  char_end: number;
  text: string;
  cite: string | null;
}

/** The chunks of the version whose head row is newest (two can be there while writers race). */
export async function readChunks(table: Table, collection: string, docId: string): Promise<DocumentChunks | null> {
  const rows = (await table
    .query()
    .where(asWhere(documentsWhere([{ collection, docId }])))
    .select(["version", "chunk", "head", "char_start", "char_end", "text", "cite"])
    .toArray()) as StoredRow[];
  const heads = rows.filter((r) => r.head).map((r) => Number(r.version));
  if (heads.length === 0) return null;
  const version = Math.max(...heads);
  const chunks = rows
    .filter((r) => Number(r.version) === version && Number(r.chunk) >= 0)
    .sort((a, b) => Number(a.chunk) - Number(b.chunk))
    .map((r) => ({
      chunkIndex: Number(r.chunk),
      text: r.text,
      start: Number(r.char_start),
      end: Number(r.char_end),
      ...(r.cite ? { citation: JSON.parse(r.cite) as SearchHit["citation"] } : {}),
    }));
  return { version, chunks };
}

/**
 * The inventory (SearchIndex.inventory): heads a page at a time in (collection, doc_id) order,
 * each page a query of its own, resumed after the last key (no read stays open between pages,
 * so maintenance may remove old table versions meanwhile); then one read of the page's rows,
 * ids and versions only, to count each document's chunks.
 */
export async function* inventoryOf(table: Table, scope: InventoryScope, batch: number): AsyncGenerator<IndexEntry[]> {
  const size = Math.max(1, Math.trunc(batch));
  const { collection, docIds } = scope;
  if (docIds) {
    if (collection === null) throw new Error("inventory: docIds need a collection");
    const ids = [...new Set(docIds)];
    for (let i = 0; i < ids.length; i += size) {
      const entries = await countChunks(
        table,
        ids.slice(i, i + size).map((docId) => ({ collection, docId })),
      );
      if (entries.length > 0) yield entries;
    }
    return;
  }
  let after: HeadRow | null = null;
  for (;;) {
    const resume: string | boolean =
      after === null
        ? true
        : collection === null
          ? `(collection > ${sqlString(after.collection)} OR (collection = ${sqlString(after.collection)} AND doc_id > ${sqlString(after.doc_id)}))`
          : `doc_id > ${sqlString(after.doc_id)}`;
    const where = asWhere(and([collection === null ? true : `collection = ${sqlString(collection)}`, "head = true", resume]));
    const heads = (await table
      .query()
      .where(where)
      .orderBy([
        { columnName: "collection", ascending: true, nullsFirst: false },
        { columnName: "doc_id", ascending: true, nullsFirst: false },
      ])
      .limit(size)
      .select(["collection", "doc_id"])
      .toArray()) as HeadRow[];
    if (heads.length === 0) return;
    const entries = await countChunks(table, heads.map(keyOf));
    if (entries.length > 0) yield entries;
    if (heads.length < size) return;
    after = heads.at(-1)!;
  }
}

/** Each of these documents that has a head: its newest version, and its chunk rows of any version. */
async function countChunks(table: Table, docs: DocumentKey[]): Promise<IndexEntry[]> {
  if (docs.length === 0) return [];
  const rows = (await table
    .query()
    .where(asWhere(documentsWhere(docs)))
    .select(["collection", "doc_id", "version", "chunk", "head"])
    .toArray()) as { collection: string; doc_id: string; version: bigint | number; chunk: number; head: boolean }[];
  const found = new Map<string, IndexEntry>();
  for (const r of rows) {
    const key = docKey(r.collection, r.doc_id);
    const entry = found.get(key) ?? { collection: r.collection, docId: r.doc_id, version: -Infinity, chunks: 0 };
    found.set(key, entry);
    if (r.head) entry.version = Math.max(entry.version, Number(r.version));
    if (Number(r.chunk) >= 0) entry.chunks += 1;
  }
  return [...found.values()].filter((e) => e.version !== -Infinity);
}
