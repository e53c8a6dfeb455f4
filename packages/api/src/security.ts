/**
 * Headers on every answer: browser security headers always, CORS only when configured.
 */
import type { RequestHandler } from "express";
import cors from "cors";
import helmet from "helmet";

type Directives = Record<string, string[]>;

/** JSON answers load nothing, are framed by no page, and a stray HTML rendering of one runs nothing. */
export const API_CSP: Directives = {
  "default-src": ["'none'"],
  "base-uri": ["'none'"],
  "form-action": ["'none'"],
  "frame-ancestors": ["'none'"],
};

/**
 * The reference pages under /docs: scripts, styles, fonts, images and fetches (the OpenAPI
 * document, "try it" requests) from docstore itself only, nothing from another host; inline
 * styles allowed (reference renderers set them), inline scripts not.
 */
export const PAGE_CSP: Directives = {
  "default-src": ["'self'"],
  "script-src": ["'self'"],
  "style-src": ["'self'", "'unsafe-inline'"],
  "img-src": ["'self'", "data:"],
  "font-src": ["'self'", "data:"],
  "connect-src": ["'self'"],
  "worker-src": ["'self'", "blob:"],
  "object-src": ["'none'"],
  "base-uri": ["'none'"],
  "form-action": ["'self'"],
  "frame-ancestors": ["'none'"],
};

const isPage = (path: string) => path === "/docs" || path.startsWith("/docs/");

/**
 * helmet's headers (nosniff, Referrer-Policy no-referrer, X-Frame-Options DENY, the
 * Cross-Origin-* policies, no X-Powered-By...) with the policy above that fits the path.
 * No Strict-Transport-Security: docstore speaks plain HTTP behind a TLS-terminating proxy,
 * whose header that is (it also decides whether it covers subdomains).
 */
export function securityHeaders(): RequestHandler {
  const withPolicy = (directives: Directives) =>
    fixedHeaders(
      helmet({
        contentSecurityPolicy: { useDefaults: false, directives },
        strictTransportSecurity: false,
        xFrameOptions: { action: "deny" },
        referrerPolicy: { policy: "no-referrer" },
      }),
    );
  const api = withPolicy(API_CSP);
  const page = withPolicy(PAGE_CSP);
  return (req, res, next) => {
    for (const [name, value] of isPage(req.path) ? page : api) res.setHeader(name, value);
    next();
  };
}

/**
 * The headers a helmet middleware sets, found once by running it against a response that
 * records them: the same for every request (no policy here depends on one), they are then set
 * in one loop, not by a dozen nested middlewares a request. Anything else it would do fails
 * the start. X-Powered-By, which helmet removes, is never set (app.ts disables it).
 */
function fixedHeaders(middleware: RequestHandler): [string, string][] {
  const headers: [string, string][] = [];
  const res = {
    setHeader: (name: string, value: unknown) => headers.push([name, String(value)]),
    removeHeader: () => {},
  };
  let passed = false;
  middleware({} as never, res as never, (err?: unknown) => {
    if (err) throw err;
    passed = true;
  });
  if (!passed) throw new Error("helmet did not pass the request on at once");
  return headers;
}

/**
 * CORS for the origins of CORS_ORIGINS (`*` for any), or null when it lists none: then no
 * answer carries CORS headers and browsers keep other origins' pages from reading any.
 * Preflights are answered here (204). Tokens travel in the Authorization header, never in
 * cookies, so credentials are not allowed.
 */
export function corsHandler(origins: readonly string[]): RequestHandler | null {
  if (origins.length === 0) return null;
  return cors({
    origin: origins.includes("*") ? "*" : [...origins],
    methods: ["GET", "POST", "DELETE"],
    allowedHeaders: ["Authorization", "Content-Type", "X-Request-Id"],
    exposedHeaders: ["X-Request-Id", "Retry-After"],
    maxAge: 600,
  });
}
