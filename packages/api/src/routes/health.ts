import { z } from "zod";
import { checkDataDir, type Config } from "@docstore/shared";
import type { AppContext } from "../context.ts";
import { route, type Route } from "../route.ts";

/** Whether the catalog, the blobs or the index are files under DATA_DIR. */
const writesDataDir = (config: Config) =>
  config.catalog.kind === "sqlite" || config.blobStore.kind === "fs" || config.index.kind === "lancedb";

/** Liveness and readiness probes: no token needed. */
export function healthRoutes(ctx: AppContext): Route[] {
  return [
    route({
      method: "get",
      path: "/healthz",
      summary: "Liveness probe (no token)",
      tag: "Service",
      response: z.object({ status: z.literal("ok") }),
      handle({ res }) {
        res.json({ status: "ok" });
      },
    }),
    route({
      method: "get",
      path: "/readyz",
      summary: "Readiness probe: dependencies reachable (no token)",
      tag: "Service",
      response: z.object({
        status: z.enum(["ready", "unavailable"]),
        checks: z
          .record(z.string(), z.string())
          .describe("each dependency, and `data_dir` where the catalog, blobs or index are files there: `ok`, or why not"),
      }),
      alsoAnswers: {
        503: "a dependency cannot be reached, or DATA_DIR cannot take a write (full or read-only): `checks` says which and why",
      },
      example: { response: { status: "ready", checks: { catalog: "ok", index: "ok", blobs: "ok", queue: "ok", data_dir: "ok" } } },
      async handle({ req, res }) {
        const { catalog, index, blobs, queue } = ctx.services;
        const checks: Record<string, { ping(): Promise<void> }> = { catalog, index, blobs, queue };
        // Loads fail while DATA_DIR cannot take a write (full, read-only), where something lives there.
        if (writesDataDir(ctx.config)) checks.data_dir = { ping: () => checkDataDir(ctx.config.dataDir) };
        const results: Record<string, string> = {};
        let ready = true;
        for (const [name, port] of Object.entries(checks)) {
          try {
            await port.ping();
            results[name] = "ok";
          } catch (err) {
            ready = false;
            results[name] = (err as Error).message;
            req.log.warn({ err, dependency: name }, "readiness check failed");
          }
        }
        res.status(ready ? 200 : 503).json({ status: ready ? "ready" : "unavailable", checks: results });
      },
    }),
  ];
}
