import type { ApiServices, Config, Logger } from "@docstore/shared";
import type { Authenticate } from "./auth.ts";
import type { RateLimiter } from "./rate-limit.ts";

/** Everything a route needs, built once by the composition root (main.ts) or a test. */
export interface AppContext {
  config: Config;
  logger: Logger;
  services: ApiServices;
  authenticate: Authenticate;
  /** Per-token requests per minute (RATE_LIMIT_PER_MIN); absent or null: unlimited. */
  rateLimiter?: RateLimiter | null;
  /** Malformed jobs the embedded worker dropped (a metric); absent without one. */
  droppedJobs?: () => number;
}
