import { Redis } from "ioredis";
import type { Catalog, CollectionStats, DocumentRecord, DocumentStatus, NewDocument, Page } from "../ports.ts";
import type { Metadata } from "../domain/metadata.ts";
import type { Logger } from "../logger.ts";
import { UnavailableError } from "../errors.ts";
import { decodeCursor, documentCursor, encodeCursor } from "../domain/cursor.ts";
import { SCRIPTS, type ScriptName } from "./redis-scripts.ts";

export interface RedisCatalogOptions {
  redisUrl: string;
  /** Keys are `${prefix}:catalog:…`: several deployments (or test runs) can share one Redis. */
  prefix: string;
  logger?: Logger;
  /** Documents removed per script call when a collection is dropped (default 500). */
  purgeChunk?: number;
  /** A command that gets no answer within this many ms fails (default 5000): a hung Redis is down too. */
  commandTimeoutMs?: number;
}

type Scripted = Redis & Record<ScriptName, (...argv: (string | number)[]) => Promise<unknown>>;

/** A document hash as HGETALL gives it (a flat field, value array); null when empty. */
function toRecord(flat: unknown): DocumentRecord | null {
  if (!Array.isArray(flat) || flat.length === 0) return null;
  const h = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) h.set(String(flat[i]), String(flat[i + 1]));
  const s = (field: string) => h.get(field) ?? "";
  return {
    collection: s("collection"),
    docId: s("docId"),
    version: Number(s("version")),
    jobId: s("jobId"),
    status: s("status") as DocumentStatus,
    metadata: JSON.parse(s("metadata")) as Metadata,
    filename: h.get("filename") ?? null,
    contentType: s("contentType"),
    blobKey: s("blobKey"),
    size: Number(s("size")),
    sha256: s("sha256"),
    chunks: Number(s("chunks")),
    error: h.get("error") ?? null,
    createdAt: s("createdAt"),
    updatedAt: s("updatedAt"),
  };
}

/** A nullable string as two script arguments: a presence flag and the value. */
const nullable = (value: string | null | undefined): [string, string] => (value == null ? ["0", ""] : ["1", value]);

/**
 * The catalog in Redis, for the distributed mode: every API replica and worker shares it.
 * Each state change is one Lua script (see redis-scripts.ts for the key layout), so it is atomic
 * and, for the marks and rollbacks, conditional on the document's current version. The client
 * fails fast while Redis is down (no offline queue: the API answers 503) and reconnects by
 * itself; every Redis error becomes an UnavailableError.
 */
export class RedisCatalog implements Catalog {
  readonly #redis: Scripted;
  readonly #ns: string;
  readonly #logger: Logger | undefined;
  readonly #purgeChunk: number;
  /** The first connection attempt: calls wait for it rather than fail during startup. */
  readonly #connecting: Promise<void>;

  constructor(options: RedisCatalogOptions) {
    this.#ns = `${options.prefix}:catalog`;
    this.#logger = options.logger;
    this.#purgeChunk = options.purgeChunk ?? 500;
    const redis = new Redis(options.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      commandTimeout: options.commandTimeoutMs ?? 5000,
      lazyConnect: true,
      // Reconnect forever, soon: an API replica must come back by itself when Redis does.
      retryStrategy: (times) => Math.min(times * 100, 2000),
    });
    redis.on("error", (err: Error) => this.#logger?.debug({ err: err.message }, "redis (catalog) error"));
    for (const [name, lua] of Object.entries(SCRIPTS)) redis.defineCommand(name, { lua, numberOfKeys: 0 });
    this.#redis = redis as Scripted;
    this.#connecting = redis.connect().catch(() => undefined);
  }

  async #run<T>(work: (redis: Scripted) => Promise<T>): Promise<T> {
    await this.#connecting;
    try {
      return await work(this.#redis);
    } catch (err) {
      throw new UnavailableError(`catalog unavailable: ${(err as Error).message}`, err);
    }
  }

  async accept(doc: NewDocument): Promise<{ record: DocumentRecord; previous: DocumentRecord | null }> {
    const now = new Date().toISOString();
    const { collection, docId, jobId, metadata, contentType, blobKey, size, sha256 } = doc;
    const reply = await this.#run((r) =>
      r.catalogAccept(
        this.#ns,
        collection,
        docId,
        now,
        jobId,
        JSON.stringify(metadata),
        contentType,
        blobKey,
        size,
        sha256,
        ...nullable(doc.filename),
      ),
    );
    const [version, createdAt, previous] = reply as [number, string, unknown];
    const record: DocumentRecord = {
      collection,
      docId,
      version: Number(version),
      jobId,
      status: "queued",
      metadata,
      filename: doc.filename ?? null,
      contentType,
      blobKey,
      size,
      sha256,
      chunks: 0,
      error: null,
      createdAt,
      updatedAt: now,
    };
    return { record, previous: toRecord(previous) };
  }

  async rollback(record: DocumentRecord, previous: DocumentRecord | null): Promise<void> {
    const restore = previous
      ? [
          "1",
          previous.version,
          previous.jobId,
          previous.status,
          JSON.stringify(previous.metadata),
          previous.contentType,
          previous.blobKey,
          previous.size,
          previous.sha256,
          previous.chunks,
          previous.updatedAt,
          ...nullable(previous.filename),
          ...nullable(previous.error),
        ]
      : ["0"];
    await this.#run((r) => r.catalogRollback(this.#ns, record.collection, record.docId, record.version, ...restore));
  }

  async get(collection: string, docId: string): Promise<DocumentRecord | null> {
    return toRecord(await this.#run((r) => r.catalogGet(this.#ns, collection, docId)));
  }

  async #mark(collection: string, docId: string, version: number, status: DocumentStatus, chunks: number | null, error: string | null) {
    const now = new Date().toISOString();
    const setChunks = chunks === null ? ["0", ""] : ["1", String(chunks)];
    const reply = await this.#run((r) =>
      r.catalogMark(this.#ns, collection, docId, version, status, now, ...setChunks, ...nullable(error)),
    );
    return Number(reply) === 1;
  }

  async markProcessing(collection: string, docId: string, version: number): Promise<boolean> {
    return this.#mark(collection, docId, version, "processing", null, null);
  }

  async markReady(collection: string, docId: string, version: number, chunks: number): Promise<boolean> {
    return this.#mark(collection, docId, version, "ready", chunks, null);
  }

  async markFailed(collection: string, docId: string, version: number, error: string): Promise<boolean> {
    return this.#mark(collection, docId, version, "failed", 0, error);
  }

  async markQueued(collection: string, docId: string, version: number): Promise<boolean> {
    return this.#mark(collection, docId, version, "queued", 0, null);
  }

  async delete(collection: string, docId: string): Promise<DocumentRecord | null> {
    return toRecord(await this.#run((r) => r.catalogDelete(this.#ns, collection, docId)));
  }

  /** The collection leaves every listing in one step; its documents are then removed in chunks. */
  async deleteCollection(collection: string): Promise<number> {
    const removed = Number(await this.#run((r) => r.catalogDropCollection(this.#ns, collection)));
    await this.#purgeDropped();
    return Math.max(removed, 0);
  }

  /**
   * Removes the documents of dropped collections, this one's and any an interrupted call left.
   * A failure here leaves the rest for the next call: the collection itself is already gone.
   */
  async #purgeDropped(): Promise<void> {
    try {
      const r = this.#redis;
      for (const dropped of await r.smembers(`${this.#ns}:trash`)) {
        while (Number(await r.catalogPurge(this.#ns, dropped, this.#purgeChunk)) > 0);
      }
    } catch (err) {
      this.#logger?.warn({ err: (err as Error).message }, "could not finish removing a dropped collection's documents");
    }
  }

  async collectionExists(collection: string): Promise<boolean> {
    return (await this.#run((r) => r.exists(`${this.#ns}:coll:${collection}`))) === 1;
  }

  async listCollections(): Promise<CollectionStats[]> {
    const rows = (await this.#run((r) => r.catalogCollections(this.#ns))) as string[][];
    return rows.map(([name = "", documents, queued, processing, ready, failed]) => ({
      name,
      documents: Number(documents),
      ready: Number(ready),
      pending: Number(queued) + Number(processing),
      failed: Number(failed),
    }));
  }

  async metadataFields(collections: readonly string[]): Promise<Set<string>> {
    if (collections.length === 0) return new Set();
    return new Set((await this.#run((r) => r.catalogFields(this.#ns, ...collections))) as string[]);
  }

  async listDocuments(collection: string, limit: number, cursor: string | null): Promise<Page<DocumentRecord>> {
    const after = cursor === null ? "" : decodeCursor(cursor, "string");
    const rows = (await this.#run((r) => r.catalogList(this.#ns, collection, after, limit + 1))) as unknown[];
    const items = rows
      .slice(0, limit)
      .map(toRecord)
      .filter((d) => d !== null);
    const last = items.at(-1);
    return { items, next: rows.length > limit && last ? documentCursor(last.docId) : null };
  }

  /** From the sorted set of pending documents (redis-scripts.ts): a page costs O(log n + limit). */
  async listPending(before: string, limit: number, cursor: string | null): Promise<Page<DocumentRecord>> {
    const after = cursor === null ? "" : decodeCursor(cursor, "string");
    const [last, looked, rows] = (await this.#run((r) => r.catalogPending(this.#ns, before, after, limit))) as [string, number, unknown[]];
    const items = rows.map(toRecord).filter((d) => d !== null);
    // Stale members looked at count against the limit too: a page may be short, yet more follow.
    return { items, next: Number(looked) >= limit && last !== "" ? encodeCursor(last) : null };
  }

  async ping(): Promise<void> {
    await this.#run((r) => r.ping());
  }

  async close(): Promise<void> {
    await this.#connecting;
    try {
      await this.#redis.quit();
    } catch {
      this.#redis.disconnect();
    }
  }
}
