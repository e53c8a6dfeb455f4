import type { Config, Logger, Services } from "@docstore/shared";
import type { Authenticate } from "./auth.ts";

/** Everything a route needs, built once by the composition root (main.ts) or a test. */
export interface AppContext {
  config: Config;
  logger: Logger;
  services: Services;
  authenticate: Authenticate;
}
