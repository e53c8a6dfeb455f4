/**
 * Documents that searches must find while their rows may lie outside LanceDB's full-text index.
 * A full-text search reads only the index (`fastSearch`): rows appended since the last
 * maintenance run are not in it, and scanning them all (as LanceDB does without fastSearch)
 * cost a search seconds during a large load (docs/benchmarks.md). So the documents a search must
 * find among those rows are listed here, and a search scans only theirs, by a second query
 * restricted to them (LanceDB applies the restriction before it scans).
 *
 * Listed: every document a write made visible at once (a write that is not deferred), and those
 * published (LanceSearchIndex.publish) before a run folded them in. An entry is added after the
 * commit that wrote its rows, so every entry that exists when a maintenance run starts names rows
 * that run folds into the index; once the run has ended, those entries are removed (`clear`).
 * A search reads the list before it queries the table, and LanceDB reads the newest version at
 * each query (readConsistencyInterval 0): a document removed from the list is already in the index
 * the search reads. The list is a SQLite file in the index folder, shared by every process on it.
 */
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, statSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { BUSY_TIMEOUT_MS, type Db, type Schema } from "../sqlite/db.ts";
import { migrate } from "../sqlite/migrate.ts";

const FILE = "outside-index.sqlite";
const SCHEMA: Schema = {
  name: "the list of documents outside the full-text index",
  migrations: [
    `CREATE TABLE IF NOT EXISTS outside (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  collection TEXT NOT NULL,
  doc_id TEXT NOT NULL,
  rows INTEGER NOT NULL
);`,
  ],
};

/** A document to list, with the rows it wrote. */
export interface OutsideDocument {
  collection: string;
  docId: string;
  rows: number;
}

/** What searches scan besides the index: the documents listed (each once), and their rows. */
export interface OutsideList {
  docs: { collection: string; docId: string }[];
  rows: number;
}

const EMPTY: OutsideList = { docs: [], rows: 0 };

/**
 * No connection stays open: each operation opens the file and closes it again, in SQLite's
 * rollback-journal mode (a WAL connection holds its files open for writing, and a folder with a
 * file open for writing cannot be remounted read-only, which the index folder must allow). A
 * search reads the list only when SQLite's file change counter (4 bytes at offset 24, increased
 * by every write transaction in that mode) moved since its last read, through a descriptor open
 * for reading; otherwise it answers from that read.
 */
export class OutsideIndex {
  readonly #file: string;
  /** A descriptor on the file for reading its change counter, and the file it was opened on. */
  #counter: { fd: number; ino: number } | null = null;
  readonly #bytes = Buffer.alloc(4);
  /** The list as last read, and the file's change counter then. */
  #cached: { list: OutsideList; changes: number; ino: number } | null = null;

  constructor(dir: string) {
    this.#file = path.join(dir, FILE);
  }

  /** Runs `write` in a write transaction on a connection of its own (the file made if need be). */
  #write<T>(write: (db: Db) => T): T {
    mkdirSync(path.dirname(this.#file), { recursive: true });
    const db = new Database(this.#file);
    try {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      db.pragma("journal_mode = DELETE");
      migrate(db, SCHEMA);
      return db.transaction(() => write(db)).immediate();
    } finally {
      db.close();
    }
  }

  /** Runs `read` on a read-only connection of its own; null when the file or its table is not there yet. */
  #read<T>(read: (db: Db) => T): T | null {
    if (!existsSync(this.#file)) return null;
    const db = new Database(this.#file, { readonly: true, fileMustExist: true });
    try {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      return db.transaction(() => read(db))();
    } catch (err) {
      if (/no such table/.test((err as Error).message)) return null; // being made by another process
      throw err;
    } finally {
      db.close();
    }
  }

  /** Whether the file exists: a folder a version before it wrote may hold rows outside the index that nothing lists. */
  exists(): boolean {
    return existsSync(this.#file);
  }

  /** Makes the file (empty). */
  create(): void {
    this.#write(() => {});
  }

  /** Lists the documents (after the commit that wrote their rows); durable when this returns. */
  add(docs: readonly OutsideDocument[]): void {
    if (docs.length === 0) return;
    this.#write((db) => {
      const add = db.prepare("INSERT INTO outside (collection, doc_id, rows) VALUES (?, ?, ?)");
      for (const d of docs) add.run(d.collection, d.docId, Math.max(1, Math.trunc(d.rows)));
    });
  }

  /** The file's change counter and inode, or null when there is no file. */
  #changes(): { changes: number; ino: number } | null {
    let ino: number;
    try {
      ino = statSync(this.#file).ino;
    } catch {
      this.#dropCounter();
      return null;
    }
    if (this.#counter?.ino !== ino) {
      this.#dropCounter();
      const fd = openSync(this.#file, "r");
      this.#counter = { fd, ino: fstatSync(fd).ino };
    }
    const read = readSync(this.#counter.fd, this.#bytes, 0, 4, 24);
    return { changes: read === 4 ? this.#bytes.readUInt32BE(0) : -1, ino: this.#counter.ino };
  }

  #dropCounter(): void {
    if (this.#counter) closeSync(this.#counter.fd);
    this.#counter = null;
  }

  /**
   * The documents listed (none while the file was never made); null when their rows are more
   * than `maxRows` (they are not read then: writers in other processes may list thousands).
   */
  list(): OutsideList;
  list(maxRows: number): OutsideList | null;
  list(maxRows = Infinity): OutsideList | null {
    const at = this.#changes();
    if (at === null) return EMPTY;
    const cached = this.#cached;
    if (at.changes >= 0 && cached && cached.changes === at.changes && cached.ino === at.ino)
      return cached.list.rows > maxRows ? null : cached.list;
    const read = this.#read((db) => {
      const { rows } = db.prepare("SELECT coalesce(sum(rows), 0) AS rows FROM outside").get() as { rows: number };
      if (rows > maxRows) return { list: null, rows };
      const entries = db.prepare("SELECT collection, doc_id AS docId FROM outside").all() as { collection: string; docId: string }[];
      const seen = new Set<string>();
      const docs = entries.filter((e) => {
        const key = JSON.stringify([e.collection, e.docId]);
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      return { list: docs.length === 0 ? EMPTY : { docs, rows }, rows };
    });
    if (read === null) return EMPTY;
    if (read.list === null) return null;
    this.#cached = { list: read.list, ...at };
    return read.list;
  }

  /** The newest entry's mark: a maintenance run reads it as it starts, and clears up to it once it ended. */
  mark(): number {
    return this.#read((db) => (db.prepare("SELECT coalesce(max(id), 0) AS id FROM outside").get() as { id: number }).id) ?? 0;
  }

  /** Removes the entries up to `mark` (their rows are in the index now). */
  clear(mark: number): void {
    if (mark <= 0) return;
    this.#write((db) => db.prepare("DELETE FROM outside WHERE id <= ?").run(mark));
  }

  close(): void {
    this.#dropCounter();
    this.#cached = null;
  }
}
