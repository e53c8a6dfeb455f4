/**
 * The browser console (src/console/): static files served as they are, no build step. The
 * page runs only its own scripts and styles, and talks only to this service.
 */
import path from "node:path";
import express, { type Express, type RequestHandler } from "express";

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

/** Serves the console at /console/ and sends / there (relative, so a proxy's path prefix is kept). */
export function mountConsole(app: Express): void {
  const files = express.static(DIR, {
    index: "index.html",
    dotfiles: "ignore",
    // Revalidated on every load (ETag), so a new release is never half old, half new.
    cacheControl: false,
    setHeaders: (res) => {
      res.setHeader("Content-Security-Policy", CONSOLE_CSP);
      res.setHeader("X-Content-Type-Options", "nosniff");
      res.setHeader("Referrer-Policy", "no-referrer");
      res.setHeader("Cache-Control", "no-cache");
    },
  });
  const onlyAssets: RequestHandler = (req, res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD") return next();
    if (req.path !== "" && !SERVED.test(req.path)) return next();
    files(req, res, next);
  };
  app.use("/console", onlyAssets);
  // Middleware rather than a route: the route table (and so OpenAPI) lists operations only.
  app.use((req, res, next) => {
    if (req.path !== "/" || (req.method !== "GET" && req.method !== "HEAD")) return next();
    res.redirect(302, "console/");
  });
}
