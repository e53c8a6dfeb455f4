/**
 * The composition root: reads the environment once, builds the adapters it names, starts the
 * in-process worker (embedded mode) and the HTTP server, and shuts all of it down in order.
 */
import type { AddressInfo } from "node:net";
import { configOrExit, createLogger, createServices, onShutdown } from "@docstore/shared";
import { startEmbeddedWorker, type EmbeddedWorker } from "@docstore/worker";
import { createApp } from "./app.ts";
import { createAuthenticator, loadOrCreateToken } from "./auth.ts";
import { createJwtVerifier } from "./jwt.ts";
import { createRateLimiter } from "./rate-limit.ts";

const config = configOrExit("docstore", process.env);
const logger = createLogger(config.logLevel);
let worker: EmbeddedWorker | null = null;
const services = createServices(config, logger, { role: "api", notify: () => worker?.wake() });

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
const server = app.listen(config.http.port, config.http.host, () => {
  const { port } = server.address() as AddressInfo;
  const host = config.http.host.includes(":") ? `[${config.http.host}]` : config.http.host;
  const url = `http://${host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host}:${port}`;
  logger.info({ url, dataDir: config.dataDir }, "docstore listening");
  // The one line a person (or a test harness) reads: where it is and how to get in.
  process.stdout.write(`docstore ready at ${url}${generated ? ` token ${generated}` : ""}\n`);
});
server.on("error", (err) => {
  logger.fatal({ err }, "cannot listen");
  process.exit(1);
});
server.keepAliveTimeout = 65_000;

onShutdown(logger, config.shutdownTimeoutMs, async () => {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  await worker?.stop();
  await rateLimiter?.close();
  await services.close();
});
