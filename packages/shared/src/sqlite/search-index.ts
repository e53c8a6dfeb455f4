import type { ChunkInput, FindRequest, IndexedDocument, SearchHit, SearchIndex, SearchRequest } from "../ports.ts";
import type { Metadata } from "../metadata.ts";
import { compileToSql } from "../filter/index.ts";
import { queryTerms } from "../query-terms.ts";
import type Database from "better-sqlite3";
import type { Db } from "./db.ts";

type Statement = Database.Statement<unknown[], unknown>;

/** Chunks in an FTS5 table (porter stemming, BM25), filtered by their document's metadata. */
export class SqliteSearchIndex implements SearchIndex {
  readonly #db: Db;
  readonly #cache = new Map<string, Statement>();
  readonly #stmt;
  readonly #index;

  constructor(db: Db) {
    this.#db = db;
    this.#stmt = {
      current: db.prepare<[string, string], { id: number; version: number }>(
        "SELECT id, version FROM indexed_docs WHERE collection = ? AND doc_id = ?",
      ),
      insertDoc: db.prepare<[string, string, number, string, string]>(
        "INSERT INTO indexed_docs (collection, doc_id, version, metadata, text) VALUES (?, ?, ?, ?, ?)",
      ),
      updateDoc: db.prepare<[number, string, string, number]>(
        "UPDATE indexed_docs SET version = ?, metadata = ?, text = ? WHERE id = ?",
      ),
      deleteDoc: db.prepare<[number]>("DELETE FROM indexed_docs WHERE id = ?"),
      deleteFts: db.prepare<[number]>("DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE doc = ?)"),
      deleteChunks: db.prepare<[number]>("DELETE FROM chunks WHERE doc = ?"),
      insertChunk: db.prepare<[number, number, number, number]>(
        'INSERT INTO chunks (doc, chunk_index, start, "end") VALUES (?, ?, ?, ?)',
      ),
      insertFts: db.prepare<[number | bigint, string]>("INSERT INTO chunks_fts (rowid, text) VALUES (?, ?)"),
      docsOf: db.prepare<[string], { id: number }>("SELECT id FROM indexed_docs WHERE collection = ?"),
    };
    this.#index = db.transaction((items: { doc: IndexedDocument; chunks: ChunkInput[] }[]) =>
      items.map(({ doc, chunks }) => this.#replace(doc, chunks)),
    );
  }

  #replace(doc: IndexedDocument, chunks: ChunkInput[]): boolean {
    const current = this.#stmt.current.get(doc.collection, doc.docId);
    if (current && current.version > doc.version) return false;
    const metadata = JSON.stringify(doc.metadata);
    let id: number;
    if (current) {
      this.#removeChunks(current.id);
      this.#stmt.updateDoc.run(doc.version, metadata, doc.text, current.id);
      id = current.id;
    } else {
      id = Number(this.#stmt.insertDoc.run(doc.collection, doc.docId, doc.version, metadata, doc.text).lastInsertRowid);
    }
    for (const chunk of chunks) {
      const chunkId = this.#stmt.insertChunk.run(id, chunk.index, chunk.start, chunk.end).lastInsertRowid;
      this.#stmt.insertFts.run(chunkId, chunk.text);
    }
    return true;
  }

  #removeChunks(docRowId: number) {
    this.#stmt.deleteFts.run(docRowId);
    this.#stmt.deleteChunks.run(docRowId);
  }

  async indexDocuments(items: { doc: IndexedDocument; chunks: ChunkInput[] }[]): Promise<boolean[]> {
    return this.#index.immediate(items);
  }

  async deleteDocument(collection: string, docId: string, version?: number): Promise<void> {
    this.#db.transaction(() => {
      const current = this.#stmt.current.get(collection, docId);
      if (!current || (version !== undefined && current.version !== version)) return;
      this.#removeChunks(current.id);
      this.#stmt.deleteDoc.run(current.id);
    }).immediate();
  }

  async deleteCollection(collection: string): Promise<void> {
    this.#db.transaction(() => {
      for (const { id } of this.#stmt.docsOf.all(collection)) {
        this.#removeChunks(id);
        this.#stmt.deleteDoc.run(id);
      }
    }).immediate();
  }

  #prepare(sql: string): Statement {
    let stmt = this.#cache.get(sql);
    if (!stmt) {
      if (this.#cache.size >= 256) this.#cache.delete(this.#cache.keys().next().value!);
      stmt = this.#db.prepare(sql);
      this.#cache.set(sql, stmt);
    }
    return stmt;
  }

  async search(request: SearchRequest): Promise<SearchHit[]> {
    const terms = queryTerms(request.query);
    if (terms.length === 0 || request.collections.length === 0) return [];
    const match = terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
    const filter = compileToSql(request.filter, { metadataColumn: "d.metadata" });
    const inList = request.collections.map(() => "?").join(", ");
    // Rank first with only ids and scores, then read the text of the k winners.
    const ranked = this.#prepare(
      `SELECT f.rowid AS id, bm25(chunks_fts) AS rank
       FROM chunks_fts f JOIN chunks c ON c.id = f.rowid JOIN indexed_docs d ON d.id = c.doc
       WHERE chunks_fts MATCH ? AND d.collection IN (${inList}) AND (${filter.where})
       ORDER BY rank LIMIT ?`,
    ).all(match, ...request.collections, ...filter.params, request.k) as { id: number; rank: number }[];
    if (ranked.length === 0) return [];
    const rows = this.#prepare(
      `SELECT c.id, c.chunk_index, c.start, c."end", d.collection, d.doc_id, d.metadata, f.text
       FROM chunks c JOIN indexed_docs d ON d.id = c.doc JOIN chunks_fts f ON f.rowid = c.id
       WHERE c.id IN (${ranked.map(() => "?").join(", ")})`,
    ).all(...ranked.map((r) => r.id)) as {
      id: number; chunk_index: number; start: number; end: number; collection: string; doc_id: string; metadata: string; text: string;
    }[];
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ranked.flatMap(({ id, rank }) => {
      const r = byId.get(id);
      if (!r) return [];
      return [{
        collection: r.collection,
        docId: r.doc_id,
        chunkIndex: r.chunk_index,
        text: r.text,
        start: r.start,
        end: r.end,
        score: -rank,
        metadata: JSON.parse(r.metadata) as Metadata,
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
