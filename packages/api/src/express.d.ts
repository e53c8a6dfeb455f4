import type { Logger } from "@docstore/shared";
import type { Principal } from "./access.ts";

declare global {
  namespace Express {
    interface Request {
      /** From X-Request-Id when the client sends one, else generated. */
      id: string;
      log: Logger;
      /** Set by the token check of a route with a scope. */
      principal?: Principal;
    }
  }
}
