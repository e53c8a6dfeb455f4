import { mkdir, readFile, rm, writeFile, opendir, access } from "node:fs/promises";
import path from "node:path";
import { constants, type Dir } from "node:fs";
import { inflateRawSync } from "node:zlib";
import type Database from "better-sqlite3";
import type { BlobStore } from "../ports.ts";
import { NotFoundError } from "../errors.ts";
import { checkpoint, openDatabase, type Db, type OpenOptions, type Schema } from "../sqlite/db.ts";
import { SMALL_BLOBS_TABLE } from "../sqlite/catalog-schema.ts";
import { GroupCommit } from "../sqlite/group-commit.ts";
import { storageError, writing } from "../storage-errors.ts";

/** small.sqlite, when the blobs are not kept in the catalog's file (its table: SMALL_BLOBS_TABLE). */
const SMALL_SCHEMA: Schema = { name: "small blobs", migrations: [SMALL_BLOBS_TABLE] };

/** How a small blob's bytes are stored: as given, or compressed with raw DEFLATE (by earlier versions). */
const ENCODING = { raw: 0, deflate: 1 } as const;

// Small blobs are stored as given: compressing them cost the API thread more than the disk it
// saved (docs/benchmarks.md, "Small raw contents stored as given"). Old compressed ones still read.
function decode(row: { data: Buffer; enc: number }): Uint8Array {
  return row.enc === ENCODING.deflate ? inflateRawSync(row.data) : row.data;
}

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/** Keys are `/`-separated segments of safe characters: a key can never leave the root. */
export function assertBlobKey(key: string): void {
  const segments = key.split("/");
  if (segments.length === 0 || !segments.every((s) => SEGMENT.test(s) && s !== "." && s !== "..")) {
    throw new Error(`invalid blob key: ${JSON.stringify(key)}`);
  }
}

/**
 * Blobs up to this size live in a SQLite file inside the folder rather than one file each: a row
 * in a group-committed transaction costs far less than creating a file (docs/benchmarks.md).
 */
const SMALL_MAX = 64 * 1024;

/** Keys of small blobs read per query while listing. */
const LIST_PAGE = 1000;

export interface FsBlobOptions extends OpenOptions {
  /**
   * Keep small blobs in this database (with its group commit) instead of `small.sqlite`: the
   * catalog's, so that the blobs and catalog rows of concurrent loads share transactions. One
   * load's blob and row are two writes, the blob first: a row never names a missing blob.
   * That database was opened with CATALOG_SCHEMA, which holds the blobs table.
   */
  shared?: { db: Db; commit: GroupCommit };
}

/**
 * Raw bytes in a local folder: large blobs as files, small ones packed in SQLite.
 * Keys are never rewritten (each version has its own), and a key is recorded in the catalog
 * only after its write completed, so a crash leaves at most an orphan, never a torn blob.
 * A write the filesystem refuses (no space, read-only) fails as a StorageError and leaves
 * nothing behind: a file cut short is removed.
 */
export class FsBlobStore implements BlobStore {
  readonly #root: string;
  readonly #madeDirs = new Set<string>();
  readonly #db: Database.Database;
  readonly #ownsDb: boolean;
  readonly #commit: GroupCommit;
  readonly #stmt;

  constructor(root: string, options: FsBlobOptions = {}) {
    this.#root = path.resolve(root);
    this.#ownsDb = !options.shared;
    this.#db = options.shared?.db ?? openDatabase(path.join(this.#root, "small.sqlite"), SMALL_SCHEMA, options);
    this.#commit = options.shared?.commit ?? new GroupCommit(this.#db);
    this.#stmt = {
      put: this.#db.prepare(
        "INSERT INTO blobs (key, data, enc) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET data = excluded.data, enc = excluded.enc",
      ),
      get: this.#db.prepare<[string], { data: Buffer; enc: number }>("SELECT data, enc FROM blobs WHERE key = ?"),
      delete: this.#db.prepare("DELETE FROM blobs WHERE key = ?"),
      deleteRange: this.#db.prepare("DELETE FROM blobs WHERE key >= ? AND key < ?"),
      list: this.#db.prepare<[string, string, number], { key: string }>(
        "SELECT key FROM blobs WHERE key > ? AND key < ? ORDER BY key LIMIT ?",
      ),
    };
  }

  #file(key: string): string {
    assertBlobKey(key);
    return path.join(this.#root, "files", ...key.split("/"));
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    assertBlobKey(key);
    if (data.byteLength <= SMALL_MAX) {
      await this.#commit.run(() => this.#stmt.put.run(key, data, ENCODING.raw));
      return;
    }
    // A key once small and now large must not leave its old row shadowing the file.
    await this.#commit.run(() => this.#stmt.delete.run(key));
    const file = this.#file(key);
    const dir = path.dirname(file);
    try {
      if (!this.#madeDirs.has(dir)) {
        await mkdir(dir, { recursive: true });
        this.#madeDirs.add(dir);
      }
      await writeFile(file, data);
    } catch (err) {
      await rm(file, { force: true }).catch(() => {}); // what was written of it, if anything
      throw storageError(err, "blobs/") ?? err;
    }
  }

  async get(key: string): Promise<Uint8Array> {
    assertBlobKey(key);
    const row = this.#stmt.get.get(key);
    if (row) return decode(row);
    try {
      return await readFile(this.#file(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new NotFoundError(`blob ${key} not found`);
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    assertBlobKey(key);
    writing(path.basename(this.#db.name), () => this.#stmt.delete.run(key));
    await rm(this.#file(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    const trimmed = prefix.replace(/\/+$/, "");
    assertBlobKey(trimmed); // before the prefix reaches a query
    writing(path.basename(this.#db.name), () => this.#stmt.deleteRange.run(`${trimmed}/`, `${trimmed}0`)); // '0' sorts right after '/'
    const dir = this.#file(trimmed);
    for (const made of this.#madeDirs) if (made === dir || made.startsWith(dir + path.sep)) this.#madeDirs.delete(made);
    await rm(dir, { recursive: true, force: true });
  }

  /**
   * A page of small blobs at a time, then the files as the folder is read: a listing of a
   * collection of any size holds a page of keys, not all of them.
   */
  async *list(prefix: string): AsyncIterable<string> {
    const trimmed = prefix.replace(/\/+$/, "");
    assertBlobKey(trimmed); // before the prefix reaches a query
    // '/' sorts right before '0': every key after `${trimmed}/` and before `${trimmed}0` is under it.
    for (let after = `${trimmed}/`; ; ) {
      const rows = this.#stmt.list.all(after, `${trimmed}0`, LIST_PAGE);
      for (const row of rows) yield row.key;
      if (rows.length < LIST_PAGE) break;
      after = rows.at(-1)!.key;
    }
    let dir: Dir;
    try {
      dir = await opendir(this.#file(trimmed), { recursive: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      throw err;
    }
    const files = path.join(this.#root, "files");
    for await (const entry of dir) {
      if (entry.isFile()) yield path.relative(files, path.join(entry.parentPath, entry.name)).split(path.sep).join("/");
    }
  }

  async ping(): Promise<void> {
    await mkdir(this.#root, { recursive: true });
    await access(this.#root, constants.W_OK);
    this.#stmt.get.get("");
  }

  checkpoint(): void {
    if (this.#ownsDb) checkpoint(this.#db);
  }

  async close(): Promise<void> {
    if (this.#ownsDb && this.#db.open) this.#db.close();
  }
}
