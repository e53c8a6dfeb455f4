import { loadConfig, type Config, type Env } from "./config.ts";
import { ConfigError } from "./errors.ts";
import type { Logger } from "./logger.ts";

/**
 * The configuration of a process entry point, or exit 2 with the message naming the variable.
 * `check` adds rules that only this kind of process has.
 */
export function configOrExit(name: string, env: Env, check?: (config: Config) => void): Config {
  try {
    const config = loadConfig(env);
    check?.(config);
    return config;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${name}: ${err.message}\n`);
    process.exit(2);
  }
}

/**
 * On SIGTERM or SIGINT, runs `stop` once (stop taking work, drain, close) and exits 0, or 1 if
 * it takes longer than `timeoutMs`.
 */
export function onShutdown(logger: Logger, timeoutMs: number, stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    setTimeout(() => {
      logger.error("shutdown timed out");
      process.exit(1);
    }, timeoutMs).unref();
    await stop();
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}
