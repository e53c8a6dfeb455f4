import { pino, type Logger } from "pino";

export type { Logger };

/** Structured JSON logs; anything that looks like a secret is redacted. */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: ["req.headers.authorization", "headers.authorization", "token", "*.token", "apiKey", "*.apiKey"],
        censor: "[redacted]",
      },
    },
    destination ?? process.stdout,
  );
}
