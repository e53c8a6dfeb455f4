/**
 * The one place where adapters are chosen. Each process (and the embedded worker thread) calls
 * createServices once, with the parsed configuration and its role, and gets exactly the
 * services that role uses, each behind its port.
 */
import type { MessagePort } from "node:worker_threads";
import type { Config } from "./config.ts";
import { ConfigError } from "./errors.ts";
import { restoreFastStringPrototype } from "./fast-strings.ts";
import type { DroppedJob } from "./domain/jobs.ts";
import type { Logger } from "./logger.ts";
import type { BlobStore, Catalog, Embedder, JobQueue, SearchIndex } from "./ports.ts";
import { FsBlobStore } from "./blob/fs.ts";
import { S3BlobStore } from "./blob/s3.ts";
import { RedisCatalog } from "./catalog/redis.ts";
import { remoteWritesCatalog, type LocalCatalog } from "./catalog/rpc.ts";
import { SqliteCatalog } from "./catalog/sqlite.ts";
import { MemoryEmbeddingCache, SqliteEmbeddingCache, type EmbeddingCache } from "./embedder/cache.ts";
import { OpenAIEmbedder } from "./embedder/openai.ts";
import { QdrantSearchIndex } from "./index/qdrant/search-index.ts";
import { LanceSearchIndex } from "./index/lancedb.ts";
import { BullQueue } from "./queue/bullmq.ts";
import { LocalQueue } from "./queue/local.ts";
import { CATALOG_SCHEMA, checkpoint, openDatabase, type Db, type Schema } from "./sqlite/db.ts";
import { GroupCommit } from "./sqlite/group-commit.ts";

/**
 * How often the WAL is checkpointed. Every page a query reads is looked up in the WAL first,
 * and the WAL starts over only once a checkpoint has copied all of it: checkpoints often keep
 * it short (the loads measured at 250, 500 and 2,000 ms: docs/benchmarks.md).
 */
const CHECKPOINT_MS = 250;

interface CommonServices {
  catalog: Catalog;
  index: SearchIndex;
  blobs: BlobStore;
  /** Null when EMBEDDER=none: search is lexical only. */
  embedder: Embedder | null;
  /** Closes every adapter, then the databases this call opened. */
  close(): Promise<void>;
}

export interface ApiServices extends CommonServices {
  /** Where accepted documents are queued. */
  queue: JobQueue;
  /**
   * With QUEUE=local, the catalog that owns every SQLite write, which serves the embedded
   * worker thread's writes too (catalog/rpc.ts); null otherwise.
   */
  localCatalog: LocalCatalog | null;
}

export interface WorkerServices extends CommonServices {
  /** Where the worker takes its jobs. */
  queue: JobQueue;
}

export type Role =
  | { role: "api"; notify?: () => void }
  | { role: "worker"; dropped?: DroppedJob }
  | { role: "embedded-worker"; port: MessagePort; dropped?: DroppedJob };

type ServicesOf<R extends Role> = R extends { role: "api" } ? ApiServices : WorkerServices;

export function createServices<R extends Role>(config: Config, logger: Logger, role: R): ServicesOf<R>;
export function createServices(config: Config, logger: Logger, role: Role): ApiServices | WorkerServices {
  // Every library is loaded by now, ioredis with its String subclass among them.
  restoreFastStringPrototype();
  const dbs: Db[] = [];
  const open = (file: string, schema: Schema, checkpoints: "auto" | "external") => {
    const db = openDatabase(file, schema, { checkpoint: checkpoints });
    dbs.push(db);
    return db;
  };
  // With the embedded worker, the API thread leaves WAL checkpoints (and their fsync) to it.
  const checkpoints = role.role === "api" && config.queue.kind === "local" && config.queue.embeddedWorker ? "external" : "auto";
  // catalog.sqlite, opened only when something uses it, holds the catalog and the small blobs
  // of the fs blob store: concurrent loads share one group commit (each load writes its blob,
  // then its row, in two transactions, so a row never names a blob that is not there).
  let catalogFile: { db: Db; commit: GroupCommit } | null = null;
  const catalogDb = () => {
    if (catalogFile) return catalogFile;
    const db = open(config.catalog.file, CATALOG_SCHEMA, checkpoints);
    return (catalogFile = { db, commit: new GroupCommit(db) });
  };

  const sqliteCatalog = config.catalog.kind === "sqlite" ? new SqliteCatalog(catalogDb().db, catalogDb().commit) : null;
  const remoteCatalog = sqliteCatalog && role.role === "embedded-worker" ? remoteWritesCatalog(role.port, sqliteCatalog) : null;
  const catalog: Catalog =
    remoteCatalog ??
    sqliteCatalog ??
    new RedisCatalog({ redisUrl: config.catalog.redisUrl, prefix: config.catalog.prefix, logger: logger.child({ component: "catalog" }) });
  const index: SearchIndex =
    config.index.kind === "lancedb"
      ? new LanceSearchIndex({
          dir: config.index.dir,
          cacheBytes: config.index.cacheBytes,
          dimensions: config.embedder.kind === "openai" ? config.embedder.dimensions : null,
          logger: logger.child({ component: "index" }),
          // The writers maintain the index; an API leaves it to them (its worker thread, or the
          // worker processes), so that its deletes never wait behind a run of its own.
          maintainEveryMs: role.role === "api" ? 0 : undefined,
          maintainAfterRows: role.role === "api" ? Infinity : undefined,
          maintainAfterCommits: role.role === "api" ? Infinity : undefined,
          // The embedded worker thread is the only one writing documents (the API thread only deletes).
          soleWriter: role.role === "embedded-worker",
          fusion: config.search.fusion,
        })
      : new QdrantSearchIndex({
          ...config.qdrant,
          dimensions: config.embedder.kind === "openai" ? config.embedder.dimensions : null,
          fusion: config.search.fusion,
        });
  const blobs: BlobStore =
    config.blobStore.kind === "s3" ? new S3BlobStore(config.blobStore.s3) : new FsBlobStore(config.blobStore.dir, { shared: catalogDb() });
  // Only workers write the persistent cache of chunk vectors; the API keeps query vectors in memory.
  const cache = (): EmbeddingCache =>
    role.role === "api" ? new MemoryEmbeddingCache() : new SqliteEmbeddingCache(config.embedder.cacheFile);
  // The API embeds only queries, for a search that will not wait longer (it goes on without them).
  const retry = role.role === "api" ? { retry: { deadlineMs: config.embedder.queryTimeoutMs } } : {};
  const embedder = config.embedder.kind === "openai" ? new OpenAIEmbedder({ ...config.embedder, cache: cache(), ...retry }) : null;

  const queueLogger = logger.child({ component: "queue" });
  let queue: JobQueue;
  let localCatalog: LocalCatalog | null = null;
  if (config.queue.kind === "bullmq") {
    queue = new BullQueue({ ...config.queue, logger: queueLogger, dropped: role.role === "api" ? undefined : role.dropped });
  } else {
    if (!sqliteCatalog) throw new ConfigError("QUEUE=local needs CATALOG=sqlite: the documents table is the queue");
    if (role.role === "api") {
      localCatalog = sqliteCatalog;
      queue = new LocalQueue(sqliteCatalog, queueLogger, { notify: role.notify });
    } else {
      // In the embedded thread, the catalog sends its writes to the API thread, but the queue claims
      // on this thread's own connection: a claim was the largest part of the HTTP thread's catalog
      // work under a load, and waiting for the write lock a claim holds costs that thread less.
      // Each batch is one index commit, and a commit costs tens of milliseconds whatever its size:
      // up to 1,024 documents a batch, and 32 MiB of contents at most (a batch is read whole).
      // Three batches at once, one a stage: read and chunked (the worker's threads), written to
      // the index (LanceDB's), marked ready (the API thread's). Figures: docs/benchmarks.md.
      queue = new LocalQueue(sqliteCatalog, queueLogger, {
        dropped: role.dropped,
        batchSize: 1024,
        batchBytes: 32 * 1024 * 1024,
        inFlight: 3,
      });
    }
  }

  // WAL checkpoints (and their fsync) run on a timer here, kept off the HTTP thread when an
  // embedded worker thread runs them for it; checkpoint() also keeps each WAL file bounded.
  // One that fails (DATA_DIR full: the database file cannot grow) loses nothing, as the WAL
  // keeps every transaction; the next one tries again. Said when it starts and when it ends.
  const failing = new Set<Db>();
  const checkpointAll = () => {
    for (const db of dbs) {
      try {
        checkpoint(db);
        if (failing.delete(db)) logger.info({ file: db.name }, "WAL checkpoint succeeded again");
      } catch (err) {
        if (!failing.has(db)) logger.warn({ err, file: db.name }, `WAL checkpoint failed; retrying every ${CHECKPOINT_MS} ms`);
        failing.add(db);
      }
    }
  };
  const checkpointTimer = checkpoints === "auto" ? setInterval(checkpointAll, CHECKPOINT_MS).unref() : null;
  const close = async () => {
    if (checkpointTimer) clearInterval(checkpointTimer);
    await queue.close();
    await index.close();
    await blobs.close();
    await catalog.close();
    await embedder?.close();
    for (const db of dbs) if (db.open) db.close();
  };
  if (role.role === "api") return { catalog, index, blobs, embedder, queue, localCatalog, close };
  return { catalog, index, blobs, embedder, queue, close };
}
