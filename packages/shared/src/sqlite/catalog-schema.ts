/**
 * The schema of catalog.sqlite: the catalog (collections, and documents with their status),
 * which is also the embedded mode's durable queue (a document is `queued` until a worker
 * indexes it), and the fs blob store's small blobs (compose.ts keeps them in the same file, so
 * that a load's blob and row share one group commit). See migrate.ts for how versions apply.
 */
import type Database from "better-sqlite3";
import type { Migration, Schema } from "./migrate.ts";

/**
 * Version 1, from any catalog made before schemas had versions (user_version 0): the statements
 * the last of those versions ran on every open, word for word. They take a catalog of any earlier
 * version (the queue's index under its old name, no counts, no metadata keys) to the same tables.
 */
const UNVERSIONED_CATALOG = `
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

/**
 * The small blobs of the fs blob store (blob/fs.ts): a rowid table, where new rows append at the
 * end of the B-tree and only the small key index takes random inserts (a table keyed by the
 * random key itself writes three times as many pages). `enc` says how the bytes are stored;
 * a table from before it existed gets the column, and its rows stay raw (0).
 */
export const SMALL_BLOBS_TABLE: Migration = (db: Database.Database) => {
  db.exec(
    "CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, data BLOB NOT NULL, enc INTEGER NOT NULL DEFAULT 0)",
  );
  const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('blobs')").all();
  if (!columns.some((c) => c.name === "enc")) db.exec("ALTER TABLE blobs ADD COLUMN enc INTEGER NOT NULL DEFAULT 0");
};

export const CATALOG_SCHEMA: Schema = {
  name: "catalog",
  migrations: [
    UNVERSIONED_CATALOG,
    // Version 2: the small blobs, which the fs blob store used to add to the file itself.
    SMALL_BLOBS_TABLE,
  ],
};
