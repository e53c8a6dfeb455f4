/**
 * The composition root: reads the environment once, claims DATA_DIR and the port, builds the
 * adapters it names, starts the in-process worker (embedded mode) and the HTTP server, and
 * shuts all of it down in order.
 */
import type { AddressInfo } from "node:net";
import { claimDataDir, configOrExit, createLogger, createServices, listen, onShutdown, orExit } from "@docstore/shared";
import { startEmbeddedWorker, type EmbeddedWorker } from "@docstore/worker";
import { createApp } from "./app.ts";
import { createAuthenticator, loadOrCreateToken } from "./auth.ts";
import { createServer } from "./server.ts";
import { createJwtVerifier } from "./jwt.ts";
import { createRateLimiter } from "./rate-limit.ts";

const NAME = "docstore";
const config = configOrExit(NAME, process.env);

// Before anything is opened: a DATA_DIR that cannot be used or is another process's, a port in
// use or a HOST that is not here ends the start with one line and exit code 2. The embedded mode
// needs DATA_DIR to itself; the distributed mode's processes may share one (data-dir.ts).
const dataDir = orExit(NAME, () => claimDataDir(config.dataDir, config.queue.kind === "local" ? "exclusive" : "shared"));
const logger = createLogger(config.logLevel);
const server = createServer(config.http, logger);
await orExit(NAME, () => listen(server, config.http.port, config.http.host, "PORT"));

let worker: EmbeddedWorker | null = null;
// A data file a newer docstore wrote is refused with a ConfigError (sqlite/migrate.ts).
const services = orExit(NAME, () => createServices(config, logger, { role: "api", notify: () => worker?.wake() }));

let tokens = config.auth.tokens ?? [];
let generated: string | null = null;
// With JWTs accepted and no API_TOKENS, the identity provider alone hands out access.
if (!config.auth.tokens && !config.auth.jwt) {
  const { token, created } = loadOrCreateToken(config.auth.tokenFile);
  tokens = [token];
  generated = token.token;
  if (created) logger.info({ file: config.auth.tokenFile }, "generated an API token");
}

// Embedded mode runs the worker in a thread of this process; with BullMQ, worker processes do.
if (services.localCatalog && config.queue.embeddedWorker) worker = startEmbeddedWorker(config, logger, services.localCatalog);

const authenticate = createAuthenticator(tokens, config.auth.jwt ? createJwtVerifier(config.auth.jwt) : null);
const rateLimiter = createRateLimiter(config.rateLimit, logger);
const app = createApp({ config, logger, services, authenticate, rateLimiter, droppedJobs: () => worker?.dropped ?? 0 });
// Attached in the same turn as the listen completed, so no request can arrive before it.
server.on("request", app);
server.on("error", (err) => {
  logger.fatal({ err }, "server failed");
  process.exit(1);
});

// Before the ready line, which is when a supervisor may start sending signals.
onShutdown(logger, config.shutdownTimeoutMs, async () => {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  await worker?.stop();
  await rateLimiter?.close();
  await services.close();
  dataDir.release();
});

const { port } = server.address() as AddressInfo;
const host = config.http.host.includes(":") ? `[${config.http.host}]` : config.http.host;
const url = `http://${host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host}:${port}`;
logger.info({ url, console: `${url}/console/`, reference: `${url}/docs`, dataDir: config.dataDir }, "docstore listening");
// The one line a person (or a test harness) reads: where it is and how to get in.
process.stdout.write(`docstore ready at ${url}${generated ? ` token ${generated}` : ""}\n`);
process.stdout.write(`console ${url}/console/, API reference ${url}/docs\n`);
