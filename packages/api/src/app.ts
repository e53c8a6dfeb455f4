import express, { type Express } from "express";
import { randomUUID } from "node:crypto";
import type { AppContext } from "./context.ts";
import { notFound, problemHandler } from "./problem.ts";
import { methodNotAllowed, mountRoutes } from "./mount.ts";
import { createMetrics } from "./metrics.ts";
import { loadRoutes } from "./routes/load.ts";
import { searchRoutes } from "./routes/search.ts";
import { collectionRoutes } from "./routes/collections.ts";
import { documentRoutes } from "./routes/documents.ts";
import { healthRoutes } from "./routes/health.ts";
import { doctorRoutes } from "./routes/doctor.ts";
import { docsAssets, docsRoutes } from "./routes/docs.ts";
import { corsHandler, securityHeaders } from "./security.ts";
import { wellFormed } from "./well-formed.ts";
import { mountConsole } from "./serve-console.ts";

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function createApp(ctx: AppContext): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
  // Responses are fresh JSON every time; hashing each one for an ETag buys clients nothing.
  app.set("etag", false);
  app.use(securityHeaders());

  // A request id on every log line and in every error body. The request's logger is made on
  // first use (most requests log nothing at the default level), by a getter on the app's request
  // prototype: a getter defined on each request would cost a closure and a slower object apiece.
  const loggers = new WeakMap<express.Request, typeof ctx.logger>();
  Object.defineProperty(app.request, "log", {
    configurable: true,
    get(this: express.Request) {
      if (this.id === undefined) return ctx.logger;
      let log = loggers.get(this);
      if (!log) loggers.set(this, (log = ctx.logger.child({ req_id: this.id })));
      return log;
    },
  });
  const logRequests = ctx.logger.isLevelEnabled("debug");
  app.use((req, res, next) => {
    const given = req.headers["x-request-id"];
    const id = typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    req.id = id;
    res.setHeader("X-Request-Id", id);
    if (logRequests) {
      const started = process.hrtime.bigint();
      res.on("finish", () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        req.log.debug({ method: req.method, path: req.path, status: res.statusCode, ms }, "request");
      });
    }
    next();
  });
  // Before the metrics: a preflight is answered here and counted nowhere (its path is any path).
  const cors = corsHandler(ctx.config.http.corsOrigins);
  if (cors) app.use(cors);
  const metrics = createMetrics(ctx);
  app.use(metrics.count);
  app.use(wellFormed);

  // The one route table: what is served here is what /openapi.json describes.
  const routes = [
    ...loadRoutes(ctx),
    ...searchRoutes(ctx),
    ...collectionRoutes(ctx),
    ...documentRoutes(ctx),
    ...doctorRoutes(ctx),
    ...healthRoutes(ctx),
    metrics.route,
  ];
  const { maxUploadBytes, maxBodyBytes } = ctx.config.http;
  const all = [...routes, ...docsRoutes(routes, { maxUploadBytes, maxBodyBytes })];
  mountRoutes(app, ctx, all);
  app.use("/docs/assets", docsAssets());
  mountConsole(app);
  app.use(methodNotAllowed(all));
  app.use(notFound);
  app.use(problemHandler(ctx.logger));
  return app;
}
