import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { registerFilterFunctions } from "../filter/index.ts";

export type Db = Database.Database;

/**
 * One schema for the embedded store. The catalog (collections, documents and their status) is
 * also the durable queue: a document is `queued` until a worker indexes it. The index side
 * (indexed_docs, chunks, chunks_fts) holds only what is searchable, so a document being
 * re-loaded stays searchable in its old version until the new one replaces it in one step.
 */
const SCHEMA = `
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

/** Opens (and creates) the database in WAL mode; several processes may share the file. */
export function openDatabase(file: string): Db {
  if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  // NORMAL in WAL mode loses nothing when the process dies; only an OS crash can drop the
  // last transactions. FULL would cost an fsync per load.
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 10000");
  db.pragma("foreign_keys = ON");
  db.pragma("cache_size = -65536");
  db.exec(SCHEMA);
  registerFilterFunctions(db);
  return db;
}
