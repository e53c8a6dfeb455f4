-- What every open ran in docstore's first version (commit f9416f6): the catalog and a prototype index in one file.
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
