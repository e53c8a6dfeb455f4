/**
 * Deletions answered before they reach the chunk table. A delete commits to a table that other
 * processes append to and compact, and LanceDB retries a commit that conflicts with theirs: in
 * the distributed mode a delete waited seconds to a minute for its turn. So a deletion of a
 * document or a collection is first written here (a SQLite file in the index folder, shared by
 * every process on it), and answered; every read hides what is here; any instance then applies
 * it to the table and removes it.
 *
 * The one order that matters: a document loaded again after its deletion (the catalog gives it
 * version 1 again) must not lose its new rows to the old deletion. Tombstones are only applied
 * by a holder of the folder's application lock (a write transaction on a second SQLite file),
 * which reads them, deletes their rows from the table and removes them before letting go; and
 * a writer applies those that concern its documents before writing them, under the same lock.
 * So no deletion is applied after a write it did not see.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import Database, { type Statement } from "better-sqlite3";
import { setTimeout as sleep } from "node:timers/promises";
import { openDatabase, type Db, type Schema } from "../sqlite/db.ts";
import { isSqliteBusy } from "../sqlite/busy.ts";
import { and, or, sqlString } from "../filter/lancedb.ts";

const TOMBSTONES_FILE = "tombstones.sqlite";
const LOCK_FILE = "tombstones-lock.sqlite";
const SCHEMA: Schema = {
  name: "tombstones",
  migrations: [
    `CREATE TABLE IF NOT EXISTS tombstones (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  collection TEXT NOT NULL,
  doc_id TEXT
);`,
  ],
};
/** How often a taken lock is tried again. */
const LOCK_RETRY_MS = 20;

/** A deletion not yet applied: of one document, or of a whole collection (docId null). */
export interface Tombstone {
  id: number;
  collection: string;
  docId: string | null;
}

/** What reads leave out while tombstones wait: as a `where` condition, and as a test of a row's document. */
export interface Hidden {
  sql: string;
  has(collection: string, docId: string): boolean;
}

/** The rows the tombstones delete, as a `where` condition. */
export function tombstonesWhere(tombstones: readonly Tombstone[]): string {
  const byCollection = Map.groupBy(tombstones, (t) => t.collection);
  const clauses = [...byCollection].map(([collection, ts]) => {
    const scope = `collection = ${sqlString(collection)}`;
    if (ts.some((t) => t.docId === null)) return scope;
    const ids = [...new Set(ts.map((t) => sqlString(t.docId!)))];
    return String(and([scope, `doc_id IN (${ids.join(", ")})`]));
  });
  return String(or(clauses));
}

/** What reads hide while these tombstones wait; null when none does. */
export function hiddenBy(tombstones: readonly Tombstone[]): Hidden | null {
  if (tombstones.length === 0) return null;
  const collections = new Set(tombstones.filter((t) => t.docId === null).map((t) => t.collection));
  const docs = new Set(tombstones.filter((t) => t.docId !== null).map((t) => JSON.stringify([t.collection, t.docId])));
  return {
    sql: `NOT (${tombstonesWhere(tombstones)})`,
    has: (collection, docId) => collections.has(collection) || docs.has(JSON.stringify([collection, docId])),
  };
}

/** The open files: opened at first use, so that a folder that cannot be written only fails deletions. */
interface Files {
  db: Db;
  lock: Db;
  add: Statement;
  pending: Statement;
  remove: Statement;
}

export class Tombstones {
  readonly #dir: string;
  #files: Files | null = null;

  constructor(dir: string) {
    this.#dir = dir;
  }

  #open(): Files {
    if (this.#files) return this.#files;
    const db = openDatabase(path.join(this.#dir, TOMBSTONES_FILE), SCHEMA);
    // No schema, no WAL: opening it takes no lock, and waiting for the lock is done here,
    // without blocking the event loop (see take).
    const lock = new Database(path.join(this.#dir, LOCK_FILE));
    lock.pragma("busy_timeout = 0");
    return (this.#files = {
      db,
      lock,
      add: db.prepare("INSERT INTO tombstones (collection, doc_id) VALUES (?, ?)"),
      pending: db.prepare("SELECT id, collection, doc_id AS docId FROM tombstones ORDER BY id"),
      remove: db.prepare("DELETE FROM tombstones WHERE id = ?"),
    });
  }

  /** Records a deletion of a document, or of a collection (docId null); durable when this returns. */
  add(collection: string, docId: string | null): void {
    this.#open().add.run(collection, docId);
  }

  /** The deletions waiting, oldest first (none while the file was never made). */
  pending(): Tombstone[] {
    if (!this.#files && !existsSync(path.join(this.#dir, TOMBSTONES_FILE))) return [];
    return this.#open().pending.all() as Tombstone[];
  }

  /**
   * Under the folder's application lock: the tombstones waiting that `select` keeps are handed to
   * `apply` (which deletes their rows from the table), then removed. Returns how many were
   * applied. When `apply` fails they stay, for the next application.
   */
  async apply(select: (pending: Tombstone[]) => Tombstone[], apply: (tombstones: Tombstone[]) => Promise<void>): Promise<number> {
    if (select(this.pending()).length === 0) return 0;
    const files = this.#open();
    await take(files.lock);
    try {
      const chosen = select(this.pending());
      if (chosen.length === 0) return 0;
      await apply(chosen);
      files.db.transaction(() => {
        for (const t of chosen) files.remove.run(t.id);
      })();
      return chosen.length;
    } finally {
      files.lock.exec("ROLLBACK");
    }
  }

  close(): void {
    this.#files?.db.close();
    this.#files?.lock.close();
    this.#files = null;
  }
}

/** Takes the application lock: a write transaction on the lock file, tried again while another connection holds it. */
async function take(lock: Db): Promise<void> {
  for (;;) {
    try {
      lock.exec("BEGIN IMMEDIATE");
      return;
    } catch (err) {
      if (!isSqliteBusy(err)) throw err;
    }
    await sleep(LOCK_RETRY_MS);
  }
}
