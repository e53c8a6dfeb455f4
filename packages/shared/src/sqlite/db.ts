import Database from "better-sqlite3";
import { mkdirSync, statSync } from "node:fs";
import path from "node:path";
import { isSqliteBusy } from "./busy.ts";
import { migrate, type Schema } from "./migrate.ts";

export type Db = Database.Database;
export { CATALOG_SCHEMA } from "./catalog-schema.ts";
export type { Schema } from "./migrate.ts";

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

/**
 * Opens (and creates) a database in WAL mode, migrated to the newest version of `schema`
 * (migrate.ts: a file from a newer docstore is refused with a ConfigError); several threads or
 * processes may share the file.
 */
export function openDatabase(file: string, schema: Schema, options: OpenOptions = {}): Db {
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
  try {
    migrate(db, schema);
  } catch (err) {
    db.close();
    throw err;
  }
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
