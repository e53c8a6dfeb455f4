import type Database from "better-sqlite3";
import type { ChunkInput, FindRequest, IndexedDocument, SearchHit, SearchIndex, SearchRequest } from "../ports.ts";
import type { Metadata } from "../domain/metadata.ts";
import { compileToSql } from "../filter/sql.ts";
import { queryTerms } from "../search/query-terms.ts";
import { dot, normalize, reciprocalRankFusion } from "../search/fusion.ts";
import { DimensionMismatchError } from "../errors.ts";
import type { Db } from "../sqlite/db.ts";

type Statement = Database.Statement<unknown[], unknown>;

interface Ranked {
  id: number;
  /** Higher is better: BM25 (negated FTS5 rank), or the RRF score of a hybrid search. */
  score: number;
}

/** Candidates each ranker contributes to a hybrid search before fusion. */
const HYBRID_DEPTH = 100;

/**
 * Chunks in FTS5 (porter stemming, BM25), one table per collection, filtered by their
 * document's metadata before ranking. A search over several collections ranks each table and
 * merges by score, as a sharded engine does with per-shard statistics.
 */
export class SqliteSearchIndex implements SearchIndex {
  readonly #db: Db;
  readonly #cache = new Map<string, Statement>();
  readonly #stmt;
  readonly #index;

  constructor(db: Db) {
    this.#db = db;
    // Indexes made before chunks had citations get the column.
    const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('chunks')").all();
    if (!columns.some((c) => c.name === "cite")) db.exec("ALTER TABLE chunks ADD COLUMN cite TEXT");
    const docColumns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('indexed_docs')").all();
    if (!docColumns.some((c) => c.name === "sha256")) db.exec("ALTER TABLE indexed_docs ADD COLUMN sha256 TEXT");
    this.#stmt = {
      current: db.prepare<[string, string], { id: number; version: number }>(
        "SELECT id, version FROM indexed_docs WHERE collection = ? AND doc_id = ?",
      ),
      insertDoc: db.prepare<[string, string, number, string, string, string | null]>(
        "INSERT INTO indexed_docs (collection, doc_id, version, metadata, text, sha256) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      updateDoc: db.prepare<[number, string, string, string | null, number]>(
        "UPDATE indexed_docs SET version = ?, metadata = ?, text = ?, sha256 = ? WHERE id = ?",
      ),
      digest: db.prepare<[string, string], { id: number; version: number; sha256: string | null; chunks: number }>(
        "SELECT d.id, d.version, d.sha256, (SELECT count(*) FROM chunks c WHERE c.doc = d.id) AS chunks FROM indexed_docs d WHERE collection = ? AND doc_id = ?",
      ),
      refresh: db.prepare<[number, string, number]>("UPDATE indexed_docs SET version = ?, metadata = ? WHERE id = ?"),
      deleteDoc: db.prepare<[number]>("DELETE FROM indexed_docs WHERE id = ?"),
      chunkIds: db.prepare<[number], { id: number }>("SELECT id FROM chunks WHERE doc = ?"),
      deleteChunks: db.prepare<[number]>("DELETE FROM chunks WHERE doc = ?"),
      insertChunk: db.prepare<[number, number, number, number, string | null]>(
        'INSERT INTO chunks (doc, chunk_index, start, "end", cite) VALUES (?, ?, ?, ?, ?)',
      ),
      table: db.prepare<[string], { id: number }>("SELECT id FROM fts_tables WHERE collection = ?"),
      addTable: db.prepare<[string]>("INSERT INTO fts_tables (collection) VALUES (?)"),
      dropTable: db.prepare<[string]>("DELETE FROM fts_tables WHERE collection = ?"),
      deleteCollectionChunks: db.prepare<[string]>("DELETE FROM chunks WHERE doc IN (SELECT id FROM indexed_docs WHERE collection = ?)"),
      deleteCollectionVectors: db.prepare<[string]>(
        "DELETE FROM chunk_vectors WHERE chunk_id IN (SELECT c.id FROM chunks c JOIN indexed_docs d ON d.id = c.doc WHERE d.collection = ?)",
      ),
      insertVector: db.prepare<[number | bigint, Buffer]>("INSERT OR REPLACE INTO chunk_vectors (chunk_id, vector) VALUES (?, ?)"),
      deleteVectors: db.prepare<[number]>("DELETE FROM chunk_vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE doc = ?)"),
      getMeta: db.prepare<[string], { value: string }>("SELECT value FROM index_meta WHERE key = ?"),
      setMeta: db.prepare<[string, string]>("INSERT OR REPLACE INTO index_meta (key, value) VALUES (?, ?)"),
      deleteCollectionDocs: db.prepare<[string]>("DELETE FROM indexed_docs WHERE collection = ?"),
    };
    this.#index = db.transaction((items: { doc: IndexedDocument; chunks: ChunkInput[] }[]) =>
      items.map(({ doc, chunks }) => this.#replace(doc, chunks)),
    );
  }

  /**
   * The FTS table of a collection; its name is built from an integer id, never from the name.
   * Looked up every time (an indexed read): another connection may have dropped or made it.
   */
  #table(collection: string, create: boolean): string | undefined {
    let row = this.#stmt.table.get(collection);
    if (!row && create) {
      this.#stmt.addTable.run(collection);
      row = this.#stmt.table.get(collection)!;
      this.#db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS fts_${row.id} USING fts5(text, tokenize = 'porter unicode61')`);
    }
    return row ? `fts_${row.id}` : undefined;
  }

  #replace(doc: IndexedDocument, chunks: ChunkInput[]): boolean {
    const current = this.#stmt.current.get(doc.collection, doc.docId);
    if (current && current.version > doc.version) return false;
    const table = this.#table(doc.collection, true)!;
    const metadata = JSON.stringify(doc.metadata);
    let id: number;
    if (current) {
      this.#removeChunks(table, current.id);
      this.#stmt.updateDoc.run(doc.version, metadata, doc.text, doc.sha256 ?? null, current.id);
      id = current.id;
    } else {
      id = Number(this.#stmt.insertDoc.run(doc.collection, doc.docId, doc.version, metadata, doc.text, doc.sha256 ?? null).lastInsertRowid);
    }
    const insertText = this.#prepare(`INSERT INTO ${table} (rowid, text) VALUES (?, ?)`);
    for (const chunk of chunks) {
      const cite = chunk.citation && Object.keys(chunk.citation).length > 0 ? JSON.stringify(chunk.citation) : null;
      const chunkId = this.#stmt.insertChunk.run(id, chunk.index, chunk.start, chunk.end, cite).lastInsertRowid;
      insertText.run(chunkId, chunk.text);
      if (chunk.vector) {
        this.#checkDimensions(chunk.vector.length);
        const v = normalize(chunk.vector);
        this.#stmt.insertVector.run(chunkId, Buffer.from(v.buffer, v.byteOffset, v.byteLength));
      }
    }
    return true;
  }

  /** The first vector fixes the index's dimension; a different one later is a configuration error. */
  #checkDimensions(length: number) {
    const stored = this.#stmt.getMeta.get("dimensions");
    if (!stored) this.#stmt.setMeta.run("dimensions", String(length));
    else if (Number(stored.value) !== length) throw DimensionMismatchError.fromIndex(Number(stored.value), length);
  }

  #removeChunks(table: string, docRowId: number) {
    this.#stmt.deleteVectors.run(docRowId);
    const remove = this.#prepare(`DELETE FROM ${table} WHERE rowid = ?`);
    for (const { id } of this.#stmt.chunkIds.all(docRowId)) remove.run(id);
    this.#stmt.deleteChunks.run(docRowId);
  }

  async indexDocuments(items: { doc: IndexedDocument; chunks: ChunkInput[] }[]): Promise<boolean[]> {
    return this.#index.immediate(items);
  }

  async refreshDocument(doc: Omit<IndexedDocument, "text"> & { sha256: string }): Promise<number | null> {
    return this.#db.transaction(() => {
      const current = this.#stmt.digest.get(doc.collection, doc.docId);
      if (!current || current.sha256 !== doc.sha256 || current.version > doc.version) return null;
      this.#stmt.refresh.run(doc.version, JSON.stringify(doc.metadata), current.id);
      return current.chunks;
    }).immediate();
  }

  async deleteDocument(collection: string, docId: string, version?: number): Promise<void> {
    this.#db.transaction(() => {
      const current = this.#stmt.current.get(collection, docId);
      const table = this.#table(collection, false);
      if (!current || !table || (version !== undefined && current.version !== version)) return;
      this.#removeChunks(table, current.id);
      this.#stmt.deleteDoc.run(current.id);
    }).immediate();
  }

  async deleteCollection(collection: string): Promise<void> {
    this.#db.transaction(() => {
      const table = this.#table(collection, false);
      this.#stmt.deleteCollectionVectors.run(collection);
      this.#stmt.deleteCollectionChunks.run(collection);
      this.#stmt.deleteCollectionDocs.run(collection);
      if (!table) return;
      this.#stmt.dropTable.run(collection);
      this.#db.exec(`DROP TABLE IF EXISTS ${table}`);
    }).immediate();
  }

  #prepare(sql: string): Statement {
    let stmt = this.#cache.get(sql);
    if (!stmt) {
      if (this.#cache.size >= 512) this.#cache.delete(this.#cache.keys().next().value!);
      stmt = this.#db.prepare(sql);
      this.#cache.set(sql, stmt);
    }
    return stmt;
  }

  async search(request: SearchRequest): Promise<SearchHit[]> {
    const filter = compileToSql(request.filter, { metadataColumn: "d.metadata" });
    const collections = [...new Set(request.collections)];
    if (!request.vector) return this.#hits(this.#lexical(request.query, collections, filter, request.k));
    // Hybrid: the best chunks by BM25 and by cosine, both filtered first, fused by RRF.
    const depth = Math.max(request.k, HYBRID_DEPTH);
    const lexical = this.#lexical(request.query, collections, filter, depth);
    const dense = this.#dense(request.vector, collections, filter, depth);
    const fused = reciprocalRankFusion([lexical, dense], (r) => String(r.id));
    return this.#hits(fused.slice(0, request.k).map(({ item, score }) => ({ id: item.id, score })));
  }

  #lexical(query: string, collections: string[], filter: ReturnType<typeof compileToSql>, k: number): Ranked[] {
    const terms = queryTerms(query);
    if (terms.length === 0) return [];
    const match = terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
    const ranked: Ranked[] = [];
    for (const collection of collections) {
      const table = this.#table(collection, false);
      if (!table) continue;
      // Without a filter the FTS table alone answers; with one, each candidate meets its
      // document's metadata before ranking.
      const sql = filter.where === "1"
        ? `SELECT rowid AS id, bm25(${table}) AS rank FROM ${table} WHERE ${table} MATCH ? ORDER BY rank LIMIT ?`
        : `SELECT f.rowid AS id, bm25(${table}) AS rank FROM ${table} f JOIN chunks c ON c.id = f.rowid
           JOIN indexed_docs d ON d.id = c.doc WHERE ${table} MATCH ? AND (${filter.where}) ORDER BY rank LIMIT ?`;
      const params = filter.where === "1" ? [match, k] : [match, ...filter.params, k];
      for (const row of this.#prepare(sql).all(...params) as { id: number; rank: number }[]) ranked.push({ id: row.id, score: -row.rank });
    }
    return ranked.sort((a, b) => b.score - a.score).slice(0, k);
  }

  /** Exact nearest neighbours by cosine over the filtered chunks: a scan, fine at embedded scale. */
  #dense(vector: number[], collections: string[], filter: ReturnType<typeof compileToSql>, k: number): Ranked[] {
    if (collections.length === 0) return [];
    const query = normalize(vector);
    const rows = this.#prepare(
      `SELECT v.chunk_id AS id, v.vector FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id
       JOIN indexed_docs d ON d.id = c.doc WHERE d.collection IN (${collections.map(() => "?").join(", ")}) AND (${filter.where})`,
    ).iterate(...collections, ...filter.params) as IterableIterator<{ id: number; vector: Buffer }>;
    const best: Ranked[] = [];
    for (const row of rows) {
      if (row.vector.byteLength !== query.byteLength) continue;
      const score = dot(query, new Float32Array(row.vector.buffer, row.vector.byteOffset, row.vector.byteLength / 4));
      if (best.length < k || score > best[best.length - 1]!.score) {
        best.push({ id: row.id, score });
        best.sort((a, b) => b.score - a.score);
        if (best.length > k) best.pop();
      }
    }
    return best;
  }

  /** Reads the text and document of each ranked chunk, keeping the ranking's order. */
  #hits(ranked: Ranked[]): SearchHit[] {
    if (ranked.length === 0) return [];
    const ids = ranked.map((r) => r.id);
    const rows = this.#prepare(
      `SELECT c.id, c.chunk_index, c.start, c."end", c.cite, d.collection, d.doc_id, d.metadata
       FROM chunks c JOIN indexed_docs d ON d.id = c.doc WHERE c.id IN (${ids.map(() => "?").join(", ")})`,
    ).all(...ids) as {
      id: number; chunk_index: number; start: number; end: number; cite: string | null; collection: string; doc_id: string; metadata: string;
    }[];
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ranked.flatMap(({ id, score }) => {
      const r = byId.get(id);
      const table = r && this.#table(r.collection, false);
      if (!r || !table) return [];
      const { text } = this.#prepare(`SELECT text FROM ${table} WHERE rowid = ?`).get(id) as { text: string };
      return [{
        collection: r.collection,
        docId: r.doc_id,
        chunkIndex: r.chunk_index,
        text,
        start: r.start,
        end: r.end,
        score,
        metadata: JSON.parse(r.metadata) as Metadata,
        ...(r.cite ? { citation: JSON.parse(r.cite) as SearchHit["citation"] } : {}),
      }];
    });
  }

  async findDocuments(request: FindRequest): Promise<IndexedDocument[]> {
    if (request.collections.length === 0) return [];
    const filter = compileToSql(request.filter, { metadataColumn: "d.metadata" });
    const order = [...filter.orderBy, "d.collection", "d.doc_id"].join(", ");
    const inList = request.collections.map(() => "?").join(", ");
    const rows = this.#prepare(
      `SELECT d.collection, d.doc_id, d.version, d.metadata, d.text FROM indexed_docs d
       WHERE d.collection IN (${inList}) AND (${filter.where})
       ORDER BY ${order} LIMIT ? OFFSET ?`,
    ).all(...request.collections, ...filter.params, ...filter.orderParams, request.limit, request.offset) as {
      collection: string; doc_id: string; version: number; metadata: string; text: string;
    }[];
    return rows.map((r) => ({
      collection: r.collection,
      docId: r.doc_id,
      version: r.version,
      metadata: JSON.parse(r.metadata) as Metadata,
      text: r.text,
    }));
  }

  async ping(): Promise<void> {
    this.#db.prepare("SELECT 1").get();
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }
}
