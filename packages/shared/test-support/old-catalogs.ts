/**
 * Catalogs as earlier versions of docstore wrote them, before schemas had versions (their
 * user_version is 0), for the tests that open them with today's code. Frozen copies: never
 * edit them to follow the schema.
 */

/** What every open ran in the first version (commit f9416f6): one file for the catalog and a prototype index. */
export const FIRST_CATALOG_SQL = `
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
CREATE INDEX IF NOT EXISTS documents_pending ON documents (status, queued_seq)
  WHERE status IN ('queued', 'processing');

CREATE TABLE IF NOT EXISTS indexed_docs (
  id INTEGER PRIMARY KEY,
  collection TEXT NOT NULL,
  doc_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  metadata TEXT NOT NULL,
  text TEXT NOT NULL,
  UNIQUE (collection, doc_id)
);

CREATE TABLE IF NOT EXISTS chunks (
  id INTEGER PRIMARY KEY,
  doc INTEGER NOT NULL,
  chunk_index INTEGER NOT NULL,
  start INTEGER NOT NULL,
  "end" INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks (doc, chunk_index);

CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, tokenize = 'porter unicode61');
`;

/** What every open ran in the last version without schema versions (commit 5b01045), catalog.sqlite's catalog tables. */
export const LAST_UNVERSIONED_CATALOG_SQL = `
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

/** The fs blob store's table in catalog.sqlite as the same version left it: created, then given `enc`. */
export const LAST_UNVERSIONED_BLOBS_SQL = `CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, data BLOB NOT NULL);
ALTER TABLE blobs ADD COLUMN enc INTEGER NOT NULL DEFAULT 0;`;
