import { z } from "zod";
import { route, type Route } from "../route.ts";
import { openApiDocument, type OpenApiDocument } from "../openapi.ts";

/** The API description, of `routes` and of these two routes themselves: no token needed. */
export function docsRoutes(routes: readonly Route[]): Route[] {
  const own = [
    route({
      method: "get",
      path: "/openapi.json",
      summary: "This OpenAPI 3.1 document (no token)",
      response: z.record(z.string(), z.unknown()),
      handle({ res }) {
        res.json(doc);
      },
    }),
    route({
      method: "get",
      path: "/docs",
      summary: "A page listing the operations (no token)",
      response: z.string(),
      contentType: "text/html",
      handle({ res }) {
        res.type("html").send(page);
      },
    }),
  ];
  // Set before any request can reach the handlers above.
  const doc = openApiDocument([...routes, ...own]);
  const page = docsPage(doc);
  return own;
}

/** A plain page listing the operations; the full description is /openapi.json. */
function docsPage(doc: OpenApiDocument): string {
  const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const rows = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => `<tr><td>${method.toUpperCase()}</td><td><code>${esc(path)}</code></td><td>${esc(op.summary)}</td></tr>`),
  );
  return `<!doctype html><meta charset="utf-8"><title>docstore API</title>
<h1>docstore API ${esc(doc.info.version)}</h1><p>Machine-readable description: <a href="/openapi.json">/openapi.json</a>.
Every operation but the probes and this description needs <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<table border="1" cellpadding="4"><tr><th>method</th><th>path</th><th>what it does</th></tr>${rows.join("")}</table>`;
}
