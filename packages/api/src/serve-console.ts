/**
 * The browser console (src/console/): static files served as they are, no build step. The
 * page runs only its own scripts and styles, and talks only to this service.
 */
import path from "node:path";
import express, { type Express, type RequestHandler, type Response } from "express";
import { STOPWORDS } from "@docstore/shared/search/query-terms";

const DIR = path.join(import.meta.dirname, "console");
/** What the console is made of; anything else in the folder (its tsconfig.json) is not served. */
const SERVED = /(^\/$|\.(html|js|css)$)/;

/** Same-origin scripts, styles and requests only: no inline code, no CDN, no framing. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The service's stopwords as a module (typed by console/stopwords.d.ts): the console marks a query's words as they are searched. */
const STOPWORDS_MODULE = `export const STOPWORDS = new Set(${JSON.stringify([...STOPWORDS])});\n`;

function consoleHeaders(res: Response): void {
  res.setHeader("Content-Security-Policy", CONSOLE_CSP);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "no-referrer");
  // Revalidated on every load (ETag), so a new release is never half old, half new.
  res.setHeader("Cache-Control", "no-cache");
}

/** Serves the console at /console/ and sends / there (relative, so a proxy's path prefix is kept). */
export function mountConsole(app: Express): void {
  const files = express.static(DIR, { index: "index.html", dotfiles: "ignore", cacheControl: false, setHeaders: consoleHeaders });
  // Middleware rather than routes: the route table (and so OpenAPI) lists operations only.
  const onlyAssets: RequestHandler = (req, res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD") return next();
    if (req.path === "/stopwords.js") {
      consoleHeaders(res);
      res.type("text/javascript").send(STOPWORDS_MODULE);
      return;
    }
    if (req.path !== "" && !SERVED.test(req.path)) return next();
    files(req, res, next);
  };
  app.use("/console", onlyAssets);
  app.use((req, res, next) => {
    if (req.path !== "/" || (req.method !== "GET" && req.method !== "HEAD")) return next();
    res.redirect(302, "console/");
  });
}
