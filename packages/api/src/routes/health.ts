import { Router } from "express";
import type { AppContext } from "../context.ts";
import { openApiDocument } from "../openapi.ts";

/** Probes and the API description: no token needed. */
export function healthRoutes(ctx: AppContext): Router {
  const router = Router();
  const doc = openApiDocument();

  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });

  router.get("/readyz", async (req, res) => {
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
  });

  router.get("/openapi.json", (_req, res) => {
    res.json(doc);
  });

  router.get("/docs", (_req, res) => {
    res.type("html").send(docsPage(doc));
  });

  return router;
}

/** A plain page listing the operations; the full description is /openapi.json. */
function docsPage(doc: ReturnType<typeof openApiDocument>): string {
  const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const rows = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => `<tr><td>${method.toUpperCase()}</td><td><code>${esc(path)}</code></td><td>${esc(op.summary)}</td></tr>`),
  );
  return `<!doctype html><meta charset="utf-8"><title>docstore API</title>
<h1>docstore API ${esc(doc.info.version)}</h1><p>Machine-readable description: <a href="/openapi.json">/openapi.json</a>.
Every operation but the probes needs <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<table border="1" cellpadding="4"><tr><th>method</th><th>path</th><th>what it does</th></tr>${rows.join("")}</table>`;
}
