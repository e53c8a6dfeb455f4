import type { Logger } from "@docstore/shared";

declare global {
  namespace Express {
    interface Request {
      /** From X-Request-Id when the client sends one, else generated. */
      id: string;
      log: Logger;
    }
  }
}

export {};
