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
import { existsSync } from "node:fs";
import path from "node:path";
import type { Statement } from "better-sqlite3";
import { openDatabase, type Db, type Schema } from "../sqlite/db.ts";

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

interface Files {
  db: Db;
  add: Statement;
  rows: Statement;
  all: Statement;
  last: Statement;
  clear: Statement;
}

export class OutsideIndex {
  readonly #dir: string;
  #files: Files | null = null;
  /** The list as last read, and the file's data_version then (another connection's commit changes it). */
  #cached: { list: OutsideList; dataVersion: number } | null = null;

  constructor(dir: string) {
    this.#dir = dir;
  }

  #open(): Files {
    if (this.#files) return this.#files;
    const db = openDatabase(path.join(this.#dir, FILE), SCHEMA);
    return (this.#files = {
      db,
      add: db.prepare("INSERT INTO outside (collection, doc_id, rows) VALUES (?, ?, ?)"),
      rows: db.prepare("SELECT coalesce(sum(rows), 0) AS rows FROM outside"),
      all: db.prepare("SELECT collection, doc_id AS docId, rows FROM outside"),
      last: db.prepare("SELECT coalesce(max(id), 0) AS id FROM outside"),
      clear: db.prepare("DELETE FROM outside WHERE id <= ?"),
    });
  }

  /** Whether the file exists: a folder a version before it wrote may hold rows outside the index that nothing lists. */
  exists(): boolean {
    return this.#files !== null || existsSync(path.join(this.#dir, FILE));
  }

  /** Makes the file (empty). */
  create(): void {
    this.#open();
  }

  /** Lists the documents (after the commit that wrote their rows); durable when this returns. */
  add(docs: readonly OutsideDocument[]): void {
    if (docs.length === 0) return;
    const files = this.#open();
    files.db.transaction(() => {
      for (const d of docs) files.add.run(d.collection, d.docId, Math.max(1, Math.trunc(d.rows)));
    })();
    this.#cached = null;
  }

  /**
   * The documents listed (none while the file was never made); null when their rows are more
   * than `maxRows` (they are not read then: writers in other processes may list thousands).
   */
  list(): OutsideList;
  list(maxRows: number): OutsideList | null;
  list(maxRows = Infinity): OutsideList | null {
    if (!this.#files && !existsSync(path.join(this.#dir, FILE))) return EMPTY;
    const files = this.#open();
    const dataVersion = files.db.pragma("data_version", { simple: true }) as number;
    if (this.#cached?.dataVersion === dataVersion) return this.#cached.list.rows > maxRows ? null : this.#cached.list;
    if ((files.rows.get() as { rows: number }).rows > maxRows) return null;
    const entries = files.all.all() as OutsideDocument[];
    const seen = new Set<string>();
    const docs: OutsideList["docs"] = [];
    let rows = 0;
    for (const e of entries) {
      rows += e.rows;
      const key = JSON.stringify([e.collection, e.docId]);
      if (seen.has(key)) continue;
      seen.add(key);
      docs.push({ collection: e.collection, docId: e.docId });
    }
    const list = docs.length === 0 ? EMPTY : { docs, rows };
    this.#cached = { list, dataVersion };
    return list;
  }

  /** The newest entry's mark: a maintenance run reads it as it starts, and clears up to it once it ended. */
  mark(): number {
    if (!this.#files && !existsSync(path.join(this.#dir, FILE))) return 0;
    return (this.#open().last.get() as { id: number }).id;
  }

  /** Removes the entries up to `mark` (their rows are in the index now). */
  clear(mark: number): void {
    if (mark <= 0) return;
    this.#open().clear.run(mark);
    this.#cached = null;
  }

  close(): void {
    this.#files?.db.close();
    this.#files = null;
    this.#cached = null;
  }
}
