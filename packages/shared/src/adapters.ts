import type { Config } from "./config.ts";
import type { Logger } from "./logger.ts";
import type { BlobStore, Catalog, Embedder, JobQueue, SearchIndex } from "./ports.ts";
import { OpenAIEmbedder, SqliteEmbeddingCache } from "./embed/index.ts";
import { FsBlobStore } from "./blob/fs.ts";
import { S3BlobStore } from "./blob/s3.ts";
import { CATALOG_SCHEMA, INDEX_SCHEMA, checkpoint, openDatabase } from "./sqlite/db.ts";
import { SqliteCatalog } from "./sqlite/catalog.ts";
import { RedisCatalog } from "./redis/catalog.ts";
import { SqliteSearchIndex } from "./sqlite/search-index.ts";
import { QdrantSearchIndex } from "./qdrant/index.ts";
import { LocalQueue } from "./queue/local.ts";
import { BullQueue } from "./queue/bullmq.ts";
import { GroupCommit } from "./sqlite/group-commit.ts";

export interface Services {
  catalog: Catalog;
  index: SearchIndex;
  blobs: BlobStore;
  queue: JobQueue;
  /** Null when EMBEDDER=none: search is lexical only. */
  embedder: Embedder | null;
  /** Periodic housekeeping for whoever runs it (SQLite: WAL checkpoints). */
  maintain(): void;
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** Called after each enqueue, e.g. to wake a worker running in another thread. */
  notify?: () => void;
  /** `external`: never checkpoint on these connections; another thread calls `maintain`. */
  checkpoint?: "auto" | "external";
}

/** Builds the adapters the configuration names. The only place that knows them all. */
export function createServices(config: Config, logger: Logger, options: ServiceOptions = {}): Services {
  const open = { checkpoint: options.checkpoint ?? "auto" } as const;
  const catalogDb = openDatabase(config.catalog.file, CATALOG_SCHEMA, open);
  const indexDb = config.index.kind === "sqlite" ? openDatabase(config.index.file, INDEX_SCHEMA, open) : null;
  // Small blobs live in the catalog's database so that a load's blob and its catalog row go
  // out in the same group commit.
  const commit = new GroupCommit(catalogDb);
  const catalog =
    config.catalog.kind === "redis"
      ? new RedisCatalog({ redisUrl: config.catalog.redisUrl, prefix: config.catalog.prefix, logger: logger.child({ component: "catalog" }) })
      : new SqliteCatalog(catalogDb, commit);
  const index =
    config.index.kind === "qdrant"
      ? new QdrantSearchIndex({ ...config.qdrant, dimensions: config.embedder.dimensions })
      : new SqliteSearchIndex(indexDb!);
  const blobs =
    config.blobStore.kind === "s3"
      ? new S3BlobStore(config.blobStore.s3)
      : new FsBlobStore(config.blobStore.dir, { shared: { db: catalogDb, commit } });
  const queue =
    config.queue.kind === "bullmq"
      ? new BullQueue({ ...config.queue, logger: logger.child({ component: "queue" }) })
      : new LocalQueue(catalog as SqliteCatalog, logger.child({ component: "queue" }), { notify: options.notify });
  const cache = config.embedder.kind === "openai" ? new SqliteEmbeddingCache(config.embedder.cacheFile) : null;
  const embedder = cache ? new OpenAIEmbedder({ ...config.embedder, cache }) : null;
  return {
    catalog,
    index,
    blobs,
    queue,
    embedder,
    maintain() {
      checkpoint(catalogDb);
      if (indexDb) checkpoint(indexDb);
    },
    async close() {
      await queue.stop();
      if (catalog instanceof RedisCatalog) await catalog.close();
      catalogDb.close();
      if (indexDb) indexDb.close();
      else await index.close();
      if (blobs instanceof S3BlobStore) blobs.close();
      cache?.close?.();
    },
  };
}
