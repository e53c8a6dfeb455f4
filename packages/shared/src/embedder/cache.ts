/**
 * Embeddings already paid for, keyed by (model, sha256 of the text): re-loading a document, or
 * retrying a job that failed half-way, sends only the chunks the service has never seen.
 * The `model` key is the embedder's namespace; it includes the dimensions when the API can
 * shorten vectors, since one model then gives different vectors per size.
 */
import { createHash } from "node:crypto";
import { openDatabase, type Db, type Schema } from "../sqlite/db.ts";

export type CachedVector = Float32Array | number[];

export interface EmbeddingCache {
  /** The vectors found, by hash; a hash absent from the map is a miss. */
  getMany(model: string, hashes: readonly string[]): Map<string, CachedVector>;
  setMany(model: string, entries: Iterable<readonly [hash: string, vector: CachedVector]>): void;
  close(): void;
}

/** The cache key of a text: its SHA-256, hex. */
export function textHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

const SCHEMA: Schema = {
  name: "embedding cache",
  migrations: [
    `CREATE TABLE IF NOT EXISTS embeddings (
  model TEXT NOT NULL,
  hash TEXT NOT NULL,
  vector BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (model, hash)
) WITHOUT ROWID;`,
  ],
};

/** Little-endian Float32 bytes: 4 bytes a dimension, a quarter of the JSON text. */
export function vectorToBlob(vector: CachedVector): Buffer {
  const floats = vector instanceof Float32Array ? vector : Float32Array.from(vector);
  const bytes = Buffer.alloc(floats.length * 4);
  for (let i = 0; i < floats.length; i++) bytes.writeFloatLE(floats[i] ?? 0, i * 4);
  return bytes;
}

export function blobToVector(blob: Uint8Array): Float32Array {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const out = new Float32Array(blob.byteLength >>> 2);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

/**
 * The embedded mode's cache: its own SQLite file (e.g. DATA_DIR/embeddings.sqlite), in WAL
 * mode so the API (query embeddings) and the worker (chunk embeddings) can share it.
 */
export class SqliteEmbeddingCache implements EmbeddingCache {
  private readonly db: Db;
  private readonly getOne;
  private readonly putOne;
  private readonly putAll;

  constructor(file: string) {
    this.db = openDatabase(file, SCHEMA);
    this.getOne = this.db.prepare<[string, string], { vector: Buffer }>("SELECT vector FROM embeddings WHERE model = ? AND hash = ?");
    this.putOne = this.db.prepare<[string, string, Buffer, number]>(
      "INSERT OR REPLACE INTO embeddings (model, hash, vector, created_at) VALUES (?, ?, ?, ?)",
    );
    this.putAll = this.db.transaction((model: string, rows: [string, Buffer][]) => {
      const now = Date.now();
      for (const [hash, blob] of rows) this.putOne.run(model, hash, blob, now);
    });
  }

  getMany(model: string, hashes: readonly string[]): Map<string, CachedVector> {
    const found = new Map<string, CachedVector>();
    // Point lookups on the primary key: a few microseconds each, and no statement-size limit.
    for (const hash of hashes) {
      if (found.has(hash)) continue;
      const row = this.getOne.get(model, hash);
      if (row) found.set(hash, blobToVector(row.vector));
    }
    return found;
  }

  setMany(model: string, entries: Iterable<readonly [string, CachedVector]>): void {
    const rows: [string, Buffer][] = [];
    for (const [hash, vector] of entries) rows.push([hash, vectorToBlob(vector)]);
    if (rows.length > 0) this.putAll(model, rows);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * Vectors kept in memory, at most `capacity` of them (the oldest written goes first): the API
 * process's cache of query vectors, so that only the worker writes the SQLite cache.
 */
export class MemoryEmbeddingCache implements EmbeddingCache {
  private readonly entries = new Map<string, Float32Array>();
  private readonly capacity: number;

  constructor(capacity = 10_000) {
    this.capacity = capacity;
  }

  get size(): number {
    return this.entries.size;
  }

  getMany(model: string, hashes: readonly string[]): Map<string, CachedVector> {
    const found = new Map<string, CachedVector>();
    for (const hash of hashes) {
      const vector = this.entries.get(`${model}\u0000${hash}`);
      if (vector) found.set(hash, vector);
    }
    return found;
  }

  setMany(model: string, entries: Iterable<readonly [string, CachedVector]>): void {
    // Stored as Float32, like the SQLite cache, so both give back identical numbers.
    for (const [hash, vector] of entries) {
      const key = `${model}\u0000${hash}`;
      this.entries.delete(key);
      this.entries.set(key, Float32Array.from(vector));
      if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    }
  }

  close(): void {
    this.entries.clear();
  }
}
