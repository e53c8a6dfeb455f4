import { z } from "zod";
import type { AppContext } from "../context.ts";
import { route, type Route } from "../route.ts";

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
        checks: z.record(z.string(), z.string()).describe("each dependency: `ok`, or why it cannot be reached"),
      }),
      alsoAnswers: { 503: "a dependency cannot be reached: `checks` says which and why" },
      example: { response: { status: "ready", checks: { catalog: "ok", index: "ok", blobs: "ok", queue: "ok" } } },
      async handle({ req, res }) {
        const { catalog, index, blobs, queue } = ctx.services;
        const checks = { catalog, index, blobs, queue };
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
