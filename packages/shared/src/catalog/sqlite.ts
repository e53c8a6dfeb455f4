import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Catalog, ClaimedJob, CollectionStats, DocumentRecord, IngestJob, NewDocument, Page } from "../ports.ts";
import type { Metadata } from "../domain/metadata.ts";
import { BUSY_TIMEOUT_MS, type Db } from "../sqlite/db.ts";
import { decodeCursor, documentCursor, encodeCursor } from "../domain/cursor.ts";
import { GroupCommit } from "../sqlite/group-commit.ts";
import { isSqliteBusy } from "../sqlite/busy.ts";
import { writing } from "../storage-errors.ts";

interface Row {
  collection: string;
  doc_id: string;
  version: number;
  job_id: string;
  status: DocumentRecord["status"];
  metadata: string;
  filename: string | null;
  content_type: string;
  blob_key: string;
  size: number;
  sha256: string;
  chunks: number;
  error: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS =
  "collection, doc_id, version, job_id, status, metadata, filename, content_type, blob_key, size, sha256, chunks, error, created_at, updated_at";

/**
 * The first `limit` queued rows in queue order (through the partial index documents_queued),
 * cut where their sizes add up to more than `maxBytes`; the first row always stays, so a
 * document larger than that is claimed alone. Parameters: updated_at, limit, maxBytes.
 */
export const CLAIM_SQL = `UPDATE documents SET status = 'processing', updated_at = ?
  WHERE id IN (
    SELECT id FROM (
      SELECT id, size, SUM(size) OVER (ORDER BY queued_seq, id ROWS UNBOUNDED PRECEDING) AS upto
      FROM (SELECT id, size, queued_seq FROM documents WHERE status = 'queued' ORDER BY queued_seq, id LIMIT ?)
    ) WHERE upto <= ? OR upto = size
  )
  RETURNING ${COLUMNS}`;

/** listPending's query: its WHERE holds the partial index's condition, so a page reads that index only. */
export const PENDING_SQL = `SELECT ${COLUMNS}, id FROM documents
  WHERE status IN ('queued', 'processing') AND updated_at < @before AND (updated_at > @at OR (updated_at = @at AND id > @id))
  ORDER BY updated_at, id LIMIT @limit`;

/** How long a claim tries for the write lock without waiting in SQLite's busy handler (see claimQueued). */
const CLAIM_POLL_MS = 200;

function toRecord(row: Row): DocumentRecord {
  return {
    collection: row.collection,
    docId: row.doc_id,
    version: row.version,
    jobId: row.job_id,
    status: row.status,
    metadata: JSON.parse(row.metadata) as Metadata,
    filename: row.filename,
    contentType: row.content_type,
    blobKey: row.blob_key,
    size: row.size,
    sha256: row.sha256,
    chunks: row.chunks,
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The catalog in SQLite. Its documents table doubles as the embedded mode's durable queue.
 * A write the filesystem refuses (no space, read-only) fails as a StorageError, whole.
 */
export class SqliteCatalog implements Catalog {
  readonly #db: Db;
  readonly #stmt;
  readonly #commit: GroupCommit;
  /** The file, as error details name it. */
  readonly #place: string;
  /**
   * The collections and metadata keys (`collection\0key`) that accepts of the transaction
   * numbered `transaction` have recorded: a bulk load's later documents skip those inserts.
   */
  #recorded = { transaction: -1, collections: new Set<string>(), fields: new Set<string>() };

  /** `commit` may be shared with other stores on the same connection (one commit for all). */
  constructor(db: Db, commit = new GroupCommit(db)) {
    this.#db = db;
    this.#commit = commit;
    this.#place = path.basename(db.name);
    this.#stmt = {
      addCollection: db.prepare("INSERT OR IGNORE INTO collections (name, created_at) VALUES (?, ?)"),
      addFields: db.prepare<[string, string]>(
        "INSERT OR IGNORE INTO collection_fields (collection, field) SELECT ?, key FROM json_each(?)",
      ),
      fields: db.prepare<[string], { field: string }>(
        "SELECT DISTINCT field FROM collection_fields WHERE collection IN (SELECT value FROM json_each(?))",
      ),
      deleteFields: db.prepare("DELETE FROM collection_fields WHERE collection = ?"),
      get: db.prepare<[string, string], Row>(`SELECT ${COLUMNS} FROM documents WHERE collection = ? AND doc_id = ?`),
      insert: db.prepare(
        `INSERT INTO documents (collection, doc_id, version, job_id, status, metadata, filename, content_type,
           blob_key, size, sha256, queued_seq, created_at, updated_at)
         VALUES (@collection, @docId, 1, @jobId, 'queued', @metadata, @filename, @contentType,
           @blobKey, @size, @sha256, @seq, @now, @now)
         ON CONFLICT (collection, doc_id) DO UPDATE SET version = version + 1, job_id = excluded.job_id,
           status = 'queued', metadata = excluded.metadata, filename = excluded.filename,
           content_type = excluded.content_type, blob_key = excluded.blob_key, size = excluded.size,
           sha256 = excluded.sha256, chunks = 0, error = NULL, queued_seq = excluded.queued_seq,
           updated_at = excluded.updated_at
         RETURNING version, created_at`,
      ),
      restore: db.prepare(
        `UPDATE documents SET version = @version, job_id = @jobId, status = @status, metadata = @metadata,
           filename = @filename, content_type = @contentType, blob_key = @blobKey, size = @size, sha256 = @sha256,
           chunks = @chunks, error = @error, updated_at = @updatedAt
         WHERE collection = @collection AND doc_id = @docId AND version = @newVersion`,
      ),
      unaccept: db.prepare<[string, string, number]>("DELETE FROM documents WHERE collection = ? AND doc_id = ? AND version = ?"),
      dropIfEmpty: db.prepare<[string, string]>(
        "DELETE FROM collections WHERE name = ? AND NOT EXISTS (SELECT 1 FROM documents WHERE collection = ?)",
      ),
      requeue1: db.prepare(
        `UPDATE documents SET status = 'queued', chunks = 0, error = NULL, queued_seq = @seq, updated_at = @now
         WHERE collection = @collection AND doc_id = @docId AND version = @version`,
      ),
      pending: db.prepare<{ before: string; at: string; id: number; limit: number }, Row & { id: number }>(PENDING_SQL),
      mark: db.prepare(
        `UPDATE documents SET status = @status, chunks = coalesce(@chunks, chunks), error = @error, updated_at = @now
         WHERE collection = @collection AND doc_id = @docId AND version = @version`,
      ),
      claim: db.prepare<[string, number, number], Row>(CLAIM_SQL),
      requeue: db.prepare("UPDATE documents SET status = 'queued' WHERE status = 'processing'"),
      release: db.prepare<[string, string, number]>(
        "UPDATE documents SET status = 'queued' WHERE collection = ? AND doc_id = ? AND version = ? AND status = 'processing'",
      ),
      delete: db.prepare<[string, string], Row>(`DELETE FROM documents WHERE collection = ? AND doc_id = ? RETURNING ${COLUMNS}`),
      deleteDocs: db.prepare("DELETE FROM documents WHERE collection = ?"),
      deleteCollection: db.prepare("DELETE FROM collections WHERE name = ?"),
      deleteCounts: db.prepare("DELETE FROM collection_counts WHERE collection = ?"),
      exists: db.prepare<[string], { one: number }>("SELECT 1 AS one FROM collections WHERE name = ?"),
      collections: db.prepare<[], CollectionStats>(
        `SELECT c.name AS name, coalesce(sum(k.n), 0) AS documents, coalesce(sum(k.n) FILTER (WHERE k.status = 'ready'), 0) AS ready,
           coalesce(sum(k.n) FILTER (WHERE k.status IN ('queued', 'processing')), 0) AS pending,
           coalesce(sum(k.n) FILTER (WHERE k.status = 'failed'), 0) AS failed
         FROM collections c LEFT JOIN collection_counts k ON k.collection = c.name GROUP BY c.name ORDER BY c.name`,
      ),
      list: db.prepare<[string, string, number], Row>(
        `SELECT ${COLUMNS} FROM documents WHERE collection = ? AND doc_id > ? ORDER BY doc_id LIMIT ?`,
      ),
    };
  }

  /** Loads arriving together share one transaction: one commit instead of one per request. */
  async accept(doc: NewDocument) {
    return this.#commit.run(() => {
      const now = new Date().toISOString();
      const recorded = this.#recordedNow();
      if (!recorded.collections.has(doc.collection)) {
        this.#stmt.addCollection.run(doc.collection, now);
        recorded.collections.add(doc.collection);
      }
      const before = this.#stmt.get.get(doc.collection, doc.docId);
      const metadata = JSON.stringify(doc.metadata);
      const fields = Object.keys(doc.metadata).map((key) => `${doc.collection}\0${key}`);
      if (!fields.every((f) => recorded.fields.has(f))) {
        this.#stmt.addFields.run(doc.collection, metadata);
        for (const f of fields) recorded.fields.add(f);
      }
      const row = this.#stmt.insert.get({ ...doc, metadata, seq: Date.now(), now }) as {
        version: number;
        created_at: string;
      };
      const record: DocumentRecord = {
        ...doc,
        version: row.version,
        status: "queued",
        chunks: 0,
        error: null,
        createdAt: row.created_at,
        updatedAt: now,
      };
      return { record, previous: before ? toRecord(before) : null };
    });
  }

  /** What this transaction's accepts recorded so far (nothing, in a new transaction). */
  #recordedNow() {
    const transaction = this.#commit.transaction;
    if (this.#recorded.transaction !== transaction) this.#recorded = { transaction, collections: new Set(), fields: new Set() };
    return this.#recorded;
  }

  async rollback(record: DocumentRecord, previous: DocumentRecord | null) {
    await this.#commit.run(() => {
      // It may drop the collection and its keys: later accepts of the transaction record them again.
      this.#recorded.transaction = -1;
      if (previous) {
        this.#stmt.restore.run({ ...previous, metadata: JSON.stringify(previous.metadata), newVersion: record.version });
      } else {
        this.#stmt.unaccept.run(record.collection, record.docId, record.version);
        if (this.#stmt.dropIfEmpty.run(record.collection, record.collection).changes > 0) this.#stmt.deleteFields.run(record.collection);
      }
    });
  }

  async get(collection: string, docId: string) {
    const row = this.#stmt.get.get(collection, docId);
    return row ? toRecord(row) : null;
  }

  #mark(collection: string, docId: string, version: number, status: string, chunks: number | null, error: string | null) {
    const mark = { collection, docId, version, status, chunks, error, now: new Date().toISOString() };
    return this.#commit.run(() => this.#stmt.mark.run(mark).changes > 0);
  }

  async markProcessing(collection: string, docId: string, version: number) {
    return this.#mark(collection, docId, version, "processing", null, null);
  }

  async markReady(collection: string, docId: string, version: number, chunks: number) {
    return this.#mark(collection, docId, version, "ready", chunks, null);
  }

  async markFailed(collection: string, docId: string, version: number, error: string) {
    return this.#mark(collection, docId, version, "failed", 0, error);
  }

  async markQueued(collection: string, docId: string, version: number) {
    const row = { collection, docId, version, seq: Date.now(), now: new Date().toISOString() };
    return this.#commit.run(() => this.#stmt.requeue1.run(row).changes > 0);
  }

  /**
   * Takes up to `limit` queued documents, oldest first, and marks them processing: no more than
   * `maxBytes` of contents together, unless the first alone is larger. Each job carries its
   * document's record as the claim left it.
   *
   * While another connection holds the write lock (the HTTP thread committing accepts), it
   * tries again every millisecond instead of sleeping in SQLite's busy handler, whose sleeps
   * grow to tens of milliseconds and hold this thread's event loop meanwhile: the batch in
   * flight goes on. After CLAIM_POLL_MS of that, it waits in the busy handler as other writes
   * do, so a claim still fails with SQLITE_BUSY only after BUSY_TIMEOUT_MS more.
   */
  async claimQueued(limit: number, maxBytes = Number.MAX_SAFE_INTEGER): Promise<ClaimedJob[]> {
    const claim = () => this.#stmt.claim.all(new Date().toISOString(), limit, maxBytes);
    const since = performance.now();
    let rows: Row[] | null;
    while ((rows = this.#withoutWaiting(claim)) === null) {
      if (performance.now() - since > CLAIM_POLL_MS) {
        rows = writing(this.#place, claim);
        break;
      }
      await sleep(1);
    }
    return rows.map((r) => {
      const record = toRecord(r);
      return { collection: record.collection, docId: record.docId, version: record.version, jobId: record.jobId, record };
    });
  }

  /** `write`'s result, or null when another connection holds the write lock (it is not waited for). */
  #withoutWaiting<T>(write: () => T): T | null {
    this.#db.pragma("busy_timeout = 0");
    try {
      return writing(this.#place, write);
    } catch (err) {
      if (isSqliteBusy(err)) return null;
      throw err;
    } finally {
      this.#db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /** After a crash, whatever was being processed is queued again (indexing is idempotent). */
  requeueProcessing(): number {
    return writing(this.#place, () => this.#stmt.requeue.run().changes);
  }

  release(jobs: IngestJob[]): void {
    if (jobs.length === 0) return;
    writing(this.#place, () =>
      this.#db
        .transaction(() => {
          for (const j of jobs) this.#stmt.release.run(j.collection, j.docId, j.version);
        })
        .immediate(),
    );
  }

  async delete(collection: string, docId: string) {
    const row = writing(this.#place, () => this.#stmt.delete.get(collection, docId));
    return row ? toRecord(row) : null;
  }

  async deleteCollection(collection: string) {
    return writing(this.#place, () =>
      this.#db
        .transaction(() => {
          const removed = this.#stmt.deleteDocs.run(collection).changes;
          this.#stmt.deleteCollection.run(collection);
          this.#stmt.deleteCounts.run(collection);
          this.#stmt.deleteFields.run(collection);
          return removed;
        })
        .immediate(),
    );
  }

  async collectionExists(collection: string) {
    return this.#stmt.exists.get(collection) !== undefined;
  }

  async metadataFields(collections: readonly string[]) {
    return new Set(this.#stmt.fields.all(JSON.stringify(collections)).map((r) => r.field));
  }

  async listCollections() {
    return this.#stmt.collections.all();
  }

  async listDocuments(collection: string, limit: number, cursor: string | null): Promise<Page<DocumentRecord>> {
    const after = cursor === null ? "" : decodeCursor(cursor, "string");
    const rows = this.#stmt.list.all(collection, after, limit + 1);
    const items = rows.slice(0, limit).map(toRecord);
    const last = items.at(-1);
    return { items, next: rows.length > limit && last ? documentCursor(last.docId) : null };
  }

  async listPending(before: string, limit: number, cursor: string | null): Promise<Page<DocumentRecord>> {
    // The cursor is the last row's change instant and row id: rows changed at the same instant are told apart.
    const [at = "", id = "0"] = cursor === null ? [] : decodeCursor(cursor, "string").split("|");
    const rows = this.#stmt.pending.all({ before, at, id: Number(id), limit: limit + 1 });
    const last = rows[Math.min(limit, rows.length) - 1];
    return {
      items: rows.slice(0, limit).map(toRecord),
      next: rows.length > limit && last ? encodeCursor(`${last.updated_at}|${last.id}`) : null,
    };
  }

  async ping() {
    this.#db.prepare("SELECT 1").get();
  }

  async close() {
    if (this.#db.open) this.#db.close();
  }
}
