import type { ApiServices, Config, Logger } from "@docstore/shared";
import type { Authenticate } from "./auth.ts";

/** Everything a route needs, built once by the composition root (main.ts) or a test. */
export interface AppContext {
  config: Config;
  logger: Logger;
  services: ApiServices;
  authenticate: Authenticate;
  /** Malformed jobs the embedded worker dropped (a metric); absent without one. */
  droppedJobs?: () => number;
}
