import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { RequestHandler } from "express";
import { marked } from "marked";
import { z } from "zod";
import { route, type Route } from "../route.ts";
import { openApiDocument, type DocumentLimits } from "../openapi.ts";

const OWN_ASSETS = path.join(import.meta.dirname, "../docs");
const SWAGGER_UI = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

/** The files under /docs/assets/, and the folder each comes from: only these are served. */
const ASSETS: Record<string, string> = {
  "swagger-ui.css": SWAGGER_UI,
  "swagger-ui-bundle.js": SWAGGER_UI,
  "favicon-32x32.png": SWAGGER_UI,
  "reference.js": OWN_ASSETS,
  "docs.css": OWN_ASSETS,
};

/** Serves the reference's scripts and styles, mounted at /docs/assets: the pages load nothing from elsewhere. */
export function docsAssets(): RequestHandler {
  return (req, res, next) => {
    const name = req.path.slice(1);
    const root = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!root || (req.method !== "GET" && req.method !== "HEAD")) return next();
    // With `root`, only the name is checked for dot segments: pnpm's store path has `.pnpm` in it.
    res.sendFile(name, { root, maxAge: "1h" }, (err) => err && next(err));
  };
}

/** The API description, of `routes` and of these routes themselves: no token needed. */
export function docsRoutes(routes: readonly Route[], limits: DocumentLimits): Route[] {
  const html = (summary: string, routePath: string, page: () => string) =>
    route({
      method: "get",
      path: routePath,
      summary,
      tag: "Service",
      response: z.string(),
      contentType: "text/html",
      handle({ res }) {
        res.type("html").send(page());
      },
    });
  const own = [
    route({
      method: "get",
      path: "/openapi.json",
      summary: "This OpenAPI 3.1 document (no token)",
      tag: "Service",
      response: z.record(z.string(), z.unknown()),
      handle({ res }) {
        res.json(doc);
      },
    }),
    html("The interactive API reference (no token)", "/docs", () => reference),
    html("The filter language (no token)", "/docs/filters", () => filters),
  ];
  // Set before any request can reach the handlers above.
  const doc = openApiDocument([...routes, ...own], limits);
  const reference = page(
    "docstore API reference",
    "/docs",
    `<noscript><p class="docstore-page">This reference needs JavaScript; the same description is <a href="/openapi.json">/openapi.json</a>.</p></noscript>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/reference.js"></script>`,
    ['<link rel="stylesheet" href="/docs/assets/swagger-ui.css">'],
  );
  const filters = page(
    "docstore: the filter language",
    "/docs/filters",
    `<main class="docstore-page">${marked.parse(readFileSync(path.join(OWN_ASSETS, "filters.md"), "utf8"), { async: false })}</main>`,
  );
  return own;
}

/** One page with the bar linking the reference, the filter language and the document. */
function page(title: string, current: string, body: string, head: string[] = []): string {
  const link = (href: string, text: string) => `<a href="${href}"${href === current ? ' aria-current="page"' : ""}>${text}</a>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
${head.join("\n")}
<link rel="stylesheet" href="/docs/assets/docs.css">
</head>
<body>
<nav class="docstore-nav"><strong>docstore</strong>${link("/docs", "API reference")}${link("/docs/filters", "Filter language")}${link("/openapi.json", "openapi.json")}</nav>
${body}
</body>
</html>
`;
}
