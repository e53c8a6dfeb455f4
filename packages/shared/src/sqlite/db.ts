import Database from "better-sqlite3";
import { mkdirSync, statSync } from "node:fs";
import path from "node:path";
import { isSqliteBusy } from "./busy.ts";

export type Db = Database.Database;

/**
 * The catalog: collections, and documents with their status. It is also the embedded mode's
 * durable queue: a document is `queued` until a worker indexes it.
 */
export const CATALOG_SCHEMA = `
CREATE TABLE IF NOT EXISTS collections (
  name TEXT PRIMARY KEY,
  created_at TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS documents (
  id INTEGER PRIMARY KEY,
  collection TEXT NOT NULL REFERENCES collections(name),
  doc_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  job_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued', 'processing', 'ready', 'failed')),
  metadata TEXT NOT NULL,
  filename TEXT,
  content_type TEXT NOT NULL,
  blob_key TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  chunks INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  queued_seq INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (collection, doc_id)
);
-- The queue's order. Only queued rows are in it (so it stays small); the condition must be
-- written exactly as the claim query's WHERE for SQLite to use a partial index.
DROP INDEX IF EXISTS documents_pending;
CREATE INDEX IF NOT EXISTS documents_queued ON documents (queued_seq) WHERE status = 'queued';
-- Pending documents by their last change, for the recovery of lost jobs (listPending): small
-- too, and again with the WHERE exactly as the query's.
CREATE INDEX IF NOT EXISTS documents_pending_age ON documents (updated_at) WHERE status IN ('queued', 'processing');

-- Documents per collection and status, kept by triggers in the transaction that changes a
-- document, so that listing collections reads a few rows instead of every document.
CREATE TABLE IF NOT EXISTS collection_counts (
  collection TEXT NOT NULL,
  status TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (collection, status)
) WITHOUT ROWID;
-- A catalog made before the counts existed: the triggers keep a row for every status a
-- collection ever had, so an empty table beside documents means it was just created.
INSERT INTO collection_counts (collection, status, n)
  SELECT collection, status, count(*) FROM documents
  WHERE NOT EXISTS (SELECT 1 FROM collection_counts) GROUP BY collection, status;
CREATE TRIGGER IF NOT EXISTS documents_counted_insert AFTER INSERT ON documents BEGIN
  INSERT INTO collection_counts (collection, status, n) VALUES (new.collection, new.status, 1)
    ON CONFLICT (collection, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS documents_counted_delete AFTER DELETE ON documents BEGIN
  UPDATE collection_counts SET n = n - 1 WHERE collection = old.collection AND status = old.status;
END;
CREATE TRIGGER IF NOT EXISTS documents_counted_update AFTER UPDATE OF status, collection ON documents
  WHEN old.status IS NOT new.status OR old.collection IS NOT new.collection BEGIN
  UPDATE collection_counts SET n = n - 1 WHERE collection = old.collection AND status = old.status;
  INSERT INTO collection_counts (collection, status, n) VALUES (new.collection, new.status, 1)
    ON CONFLICT (collection, status) DO UPDATE SET n = n + 1;
END;

-- Every metadata key a document of the collection has been loaded with: a superset of the keys
-- present now (a delete or a replacement removes none), dropped with the collection. Filled
-- from the documents once, for a catalog made before this table.
CREATE TABLE IF NOT EXISTS collection_fields (
  collection TEXT NOT NULL,
  field TEXT NOT NULL,
  PRIMARY KEY (collection, field)
) WITHOUT ROWID;
INSERT OR IGNORE INTO collection_fields (collection, field)
  SELECT d.collection, j.key FROM documents d, json_each(d.metadata) j
  WHERE NOT EXISTS (SELECT 1 FROM collection_fields);
`;

export interface OpenOptions {
  /**
   * `external`: this connection never checkpoints the WAL; another thread does it (see
   * `checkpoint`), so that the fsync a checkpoint costs stays off the HTTP thread.
   */
  checkpoint?: "auto" | "external";
}

/**
 * Switching a file to WAL can answer SQLITE_BUSY at once, without waiting on the busy handler,
 * while another process opens the same file (seen when two workers started together): it is
 * tried again for up to 10 s.
 */
function enableWal(db: Db): void {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      db.pragma("journal_mode = WAL");
      return;
    } catch (err) {
      if (!isSqliteBusy(err) || Date.now() > deadline) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
}

/** How long a write waits for another connection's write lock before it fails with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 10_000;

/** Opens (and creates) a database in WAL mode; several threads or processes may share the file. */
export function openDatabase(file: string, schema: string, options: OpenOptions = {}): Db {
  if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  enableWal(db);
  // NORMAL in WAL mode loses nothing when the process dies; only an OS crash can drop the
  // last transactions. FULL would cost an fsync per load.
  db.pragma("synchronous = NORMAL");
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma("foreign_keys = ON");
  db.pragma("cache_size = -65536");
  if (options.checkpoint === "external") db.pragma("wal_autocheckpoint = 0");
  // After a checkpoint that empties the WAL, the file is cut back to this size.
  db.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
  // In one write transaction, so that connections opening together never race on a step.
  db.transaction(() => db.exec(schema)).immediate();
  return db;
}

/** Past this size the WAL is checkpointed in full and truncated (see `checkpoint`). */
export const WAL_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * How long a TRUNCATE checkpoint waits for the writer and for readers of older snapshots. It
 * holds the write lock while it waits for the readers, so every other writer waits too: with
 * the busy timeout (10 s) a load arriving meanwhile timed out and was refused, where this
 * checkpoint gives up instead and the next one tries again.
 */
export const CHECKPOINT_WAIT_MS = 1_000;

/**
 * Copies what the WAL holds back into the database. A PASSIVE checkpoint never waits, but under
 * a continuous load it never finishes either, and the WAL file only grows; so once the file is
 * past WAL_LIMIT_BYTES, a TRUNCATE checkpoint waits (up to CHECKPOINT_WAIT_MS) for the writer
 * and the readers in flight, copies everything and empties the file. Writers wait meanwhile.
 */
export function checkpoint(db: Db, limitBytes = WAL_LIMIT_BYTES): void {
  if (!db.open) return;
  db.pragma("wal_checkpoint(PASSIVE)");
  if (walBytes(db) <= limitBytes) return;
  db.pragma(`busy_timeout = ${CHECKPOINT_WAIT_MS}`);
  try {
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}

/** Size of the database's WAL file (0 when there is none). */
export function walBytes(db: Db): number {
  try {
    return statSync(`${db.name}-wal`).size;
  } catch {
    return 0;
  }
}
