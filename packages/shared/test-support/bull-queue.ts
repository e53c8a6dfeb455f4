import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { createLogger } from "../src/logger.ts";
import { BullQueue } from "../src/queue/bullmq.ts";
import { deleteRedisKeys } from "./redis-server.ts";

/**
 * A BullQueue on `prefix`, with the test's own look at the queue (`raw`, as an operator would
 * take it); `close()` closes both and deletes every key under the prefix.
 */
export function bullQueueFixture(redisUrl: string, prefix: string, sizes: { concurrency: number; batchSize?: number }) {
  const queue = new BullQueue({ redisUrl, prefix, ...sizes, logger: createLogger("silent") });
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const raw = new Queue("ingest", { connection, prefix });
  const close = async () => {
    await queue.close();
    await raw.close();
    connection.disconnect();
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  };
  return { queue, raw, prefix, close };
}
