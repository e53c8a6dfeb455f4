import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { RateLimitedError, type Logger, type RateLimitConfig } from "@docstore/shared";
import type { Principal } from "./access.ts";

export interface RateLimiter {
  /** Counts one request of the principal; throws RateLimitedError (429) past its budget. */
  consume(principal: Principal): Promise<void>;
  close(): Promise<void>;
}

const WINDOW_SECONDS = 60;

/**
 * RATE_LIMIT_PER_MIN requests per token in each window of a minute, the window starting with the
 * token's first request. With QUEUE=bullmq the counts live in Redis (one atomic script per
 * request), so every API replica draws on the same budget; while Redis cannot be reached, each
 * replica counts in its own memory instead, rather than refusing or waiting. Null when off.
 */
export function createRateLimiter(config: RateLimitConfig, logger: Logger): RateLimiter | null {
  if (config.perMinute === 0) return null;
  const options = { points: config.perMinute, duration: WINDOW_SECONDS };
  const memory = new RateLimiterMemory(options);
  let redis: Redis | null = null;
  let limiter: RateLimiterMemory | RateLimiterRedis = memory;
  // Requests wait for the first connection attempt, so that a replica that just started counts
  // in Redis like the others rather than in its memory.
  let connecting: Promise<void> = Promise.resolve();
  if (config.redisUrl) {
    redis = new Redis(config.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      commandTimeout: 1000,
      lazyConnect: true,
      retryStrategy: (times) => Math.min(times * 100, 2000),
    });
    redis.on("error", (err: Error) => logger.debug({ err: err.message }, "redis (rate limit) error"));
    connecting = redis.connect().catch(() => undefined);
    limiter = new RateLimiterRedis({
      ...options,
      storeClient: redis,
      keyPrefix: `${config.prefix}:ratelimit`,
      rejectIfRedisNotReady: true,
      insuranceLimiter: memory,
    });
  }
  return {
    async consume(principal) {
      await connecting;
      try {
        await limiter.consume(principal.id);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        const seconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
        throw new RateLimitedError(
          `this token is over its ${config.perMinute} requests per minute (RATE_LIMIT_PER_MIN); retry in ${seconds} s`,
          seconds,
        );
      }
    },
    async close() {
      redis?.disconnect();
    },
  };
}
