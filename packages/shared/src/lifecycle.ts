import type { Server } from "node:net";
import { loadConfig, type Config, type Env } from "./config.ts";
import { ConfigError } from "./errors.ts";
import type { Logger } from "./logger.ts";

/**
 * A start-up step of a process entry point; if it throws (or rejects with) a ConfigError,
 * the process prints `name: message`, one line, and exits with code 2. Other errors pass.
 */
export function orExit<T>(name: string, step: () => T): T {
  const fail = (err: unknown): never => {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${name}: ${err.message}\n`);
    process.exit(2);
  };
  try {
    const result = step();
    return (result instanceof Promise ? result.catch(fail) : result) as T;
  } catch (err) {
    return fail(err);
  }
}

/**
 * The configuration of a process entry point, or exit 2 with the message naming the variable.
 * `check` adds rules that only this kind of process has.
 */
export function configOrExit(name: string, env: Env, check?: (config: Config) => void): Config {
  return orExit(name, () => {
    const config = loadConfig(env);
    check?.(config);
    return config;
  });
}

/**
 * Listens on `host`:`port`. A port in use or not allowed, or a host that is not an address of
 * this machine, rejects with a ConfigError naming the variable (`portVariable` or HOST).
 */
export function listen(server: Server, port: number, host: string, portVariable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => reject(listenError(err, port, host, portVariable));
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

function listenError(err: NodeJS.ErrnoException, port: number, host: string, portVariable: string): Error {
  switch (err.code) {
    case "EADDRINUSE":
      return new ConfigError(
        `${portVariable}=${port}: already in use on ${host}; stop what listens there or choose another ${portVariable}`,
      );
    case "EACCES":
      return new ConfigError(`${portVariable}=${port}: not allowed on ${host} (EACCES); ports below 1024 need privileges`);
    case "EADDRNOTAVAIL":
    case "EAFNOSUPPORT":
    case "EINVAL":
      return new ConfigError(
        `HOST=${host}: not an address of this machine (${err.code}); use 127.0.0.1, 0.0.0.0 or one of its interfaces' addresses`,
      );
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_FAIL":
    case "EAI_NONAME":
      return new ConfigError(`HOST=${host}: cannot be resolved to an address (${err.code})`);
    default:
      return err;
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
