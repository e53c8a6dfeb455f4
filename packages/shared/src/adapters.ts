import type { Config } from "./config.ts";
import type { Logger } from "./logger.ts";
import type { BlobStore, Catalog, JobQueue, SearchIndex } from "./ports.ts";
import { FsBlobStore } from "./blob/fs.ts";
import { openDatabase } from "./sqlite/db.ts";
import { SqliteCatalog } from "./sqlite/catalog.ts";
import { SqliteSearchIndex } from "./sqlite/search-index.ts";
import { LocalQueue } from "./queue/local.ts";

export interface Services {
  catalog: Catalog;
  index: SearchIndex;
  blobs: BlobStore;
  queue: JobQueue;
  close(): Promise<void>;
}

/** Builds the adapters the configuration names. The only place that knows them all. */
export function createServices(config: Config, logger: Logger): Services {
  const db = openDatabase(config.index.file);
  const catalog = new SqliteCatalog(db);
  const index = new SqliteSearchIndex(db);
  const blobs = new FsBlobStore(config.blobStore.dir);
  const queue = new LocalQueue(catalog, logger.child({ component: "queue" }));
  return {
    catalog,
    index,
    blobs,
    queue,
    async close() {
      await queue.stop();
      db.close();
    },
  };
}
