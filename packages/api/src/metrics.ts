import type { NextFunction, Request, Response } from "express";
import { z } from "zod";
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import type { AppContext } from "./context.ts";
import { assertUnrestricted, principalOf } from "./access.ts";
import { route } from "./route.ts";

/**
 * Prometheus metrics, one registry per app (no global state): requests by route and status,
 * and the catalog's documents by status, read when scraped. Process metrics come with them.
 */
export function createMetrics(ctx: AppContext) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "docstore_" });
  const requests = new Counter({
    name: "docstore_http_requests_total",
    help: "HTTP requests by method, route and status",
    labelNames: ["method", "route", "status"] as const,
    registers: [registry],
  });
  new Gauge({
    name: "docstore_documents",
    help: "Documents in the catalog by ingestion status (pending = queued or processing)",
    labelNames: ["status"] as const,
    registers: [registry],
    async collect() {
      const totals = { ready: 0, pending: 0, failed: 0 };
      for (const c of await ctx.services.catalog.listCollections()) {
        totals.ready += c.ready;
        totals.pending += c.pending;
        totals.failed += c.failed;
      }
      for (const [status, n] of Object.entries(totals)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: "docstore_jobs_dropped",
    help: "Job payloads the embedded worker dropped because they did not match their queue's schema (worker processes export docstore_jobs_dropped_total)",
    registers: [registry],
    collect() {
      this.set(ctx.droppedJobs?.() ?? 0);
    },
  });
  new Gauge({
    name: "docstore_collections",
    help: "Collections in the catalog",
    registers: [registry],
    async collect() {
      this.set((await ctx.services.catalog.listCollections()).length);
    },
  });

  /** Counts each request when its response is sent; the route is the matched path, never the URL. */
  const count = (req: Request, res: Response, next: NextFunction) => {
    res.once("finish", () => counted(req, res).inc());
    next();
  };
  // The counter of a matched route (a bounded set: routes, methods, statuses), kept: prom-client
  // hashes the labels of every call otherwise.
  const matched = new Map<string, Counter.Internal>();
  const counted = (req: Request, res: Response) => {
    const status = String(res.statusCode);
    if (req.route === undefined)
      return requests.labels({ method: req.method, route: res.statusCode === 404 ? "unmatched" : req.path, status });
    const route = String(req.route.path);
    const key = `${req.method} ${status} ${route}`;
    let counter = matched.get(key);
    if (!counter) matched.set(key, (counter = requests.labels({ method: req.method, route, status })));
    return counter;
  };

  const scrape = route({
    method: "get",
    path: "/metrics",
    summary: "Prometheus metrics (text exposition format); not for a token restricted to some collections",
    tag: "Service",
    scope: "read",
    response: z.string(),
    contentType: "text/plain",
    async handle({ req, res }) {
      assertUnrestricted(principalOf(req), "/metrics");
      res.type(registry.contentType).send(await registry.metrics());
    },
  });
  return { count, route: scrape };
}
