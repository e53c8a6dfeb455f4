import type { Express, Request, RequestHandler } from "express";
import { z } from "zod";
import { BadRequestError, MethodNotAllowedError } from "@docstore/shared";
import type { AppContext } from "./context.ts";
import { assertInputCollections, principalOf } from "./access.ts";
import { requireScope } from "./auth.ts";
import { jsonBody, multipartBody } from "./body.ts";
import { refuseUnknownKeys } from "./keys.ts";
import type { Route } from "./route.ts";
import { parse, shown } from "./schemas.ts";

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The names a route reads from the query string and from the body. */
function namesOf(route: Route) {
  const query = route.query ? Object.keys(route.query.shape) : [];
  // A route whose query fields may come in a body reads all of them from either place.
  const body = route.queryInBody ? query : route.body instanceof z.ZodObject ? Object.keys(route.body.shape) : [];
  return { query, body };
}

/**
 * Refuses what an operation would not read: unknown query parameters, body fields or form
 * fields. The probes and the description (no scope) stay lenient: a probe or a browser may add
 * a parameter of its own.
 */
function refuseUnread(route: Route, req: Request) {
  if (!route.scope) return;
  const names = namesOf(route);
  const bodyOnly = names.body.filter((n) => !names.query.includes(n));
  refuseUnknownKeys(req.query, names.query, "query parameter", { names: bodyOnly, place: "field of the JSON body" });
  if (route.multipart) {
    const fields = Object.keys(route.multipart.fields);
    refuseUnknownKeys({ ...(req.body as object | undefined) }, fields, "form field", { names: names.query, place: "query parameter" });
    return;
  }
  const body: unknown = req.body;
  if (body === undefined) return;
  if (!isObject(body)) {
    const what =
      names.body.length > 0
        ? `a JSON object with the fields ${names.body.join(", ")}`
        : "no body (this operation reads only query parameters)";
    throw new BadRequestError(
      `body: received ${Array.isArray(body) ? "a JSON array" : `the JSON value ${shown(body)}`}; accepted: ${what}`,
    );
  }
  refuseUnknownKeys(body, names.body, "field", { names: names.query.filter((n) => !names.body.includes(n)), place: "query parameter" });
}

/** Validates in the order the errors are reported: unread keys, the query, then the file, then the body. */
function validate(route: Route, req: Request) {
  refuseUnread(route, req);
  let query: Record<string, unknown> | undefined;
  if (route.query && route.queryInBody) query = parse(route.query, { ...req.query, ...(req.body as object | undefined) }, "request");
  else if (route.query) query = parse(route.query, req.query, "query");
  if (route.multipart && !req.file) {
    throw new BadRequestError(
      `${route.multipart.file}: is required; received no file; accepted: multipart/form-data with the file in the part '${route.multipart.file}'`,
    );
  }
  const body = route.body ? parse(route.body, req.body ?? {}, "body") : undefined;
  return { query, body, file: req.file };
}

/**
 * Serves each route: the token check its scope asks for, the body reader (JSON, or multer for
 * an upload), then validation, the token's collections against those the input names, and the
 * handler. Errors go on to the app's problem handler, which Express 5 also gives the handlers'
 * rejected promises.
 */
export function mountRoutes(app: Express, ctx: AppContext, routes: readonly Route[]): void {
  const json = jsonBody(ctx.config.http.maxBodyBytes);
  for (const route of routes) {
    const handlers: RequestHandler[] = [];
    if (route.scope) handlers.push(requireScope(ctx, route.scope));
    // An upload names its collection in the query string: refuse it before reading the file.
    if (route.scope && route.multipart) {
      handlers.push((req, _res, next) => {
        assertInputCollections(principalOf(req), req.query);
        next();
      });
    }
    handlers.push(...(route.multipart ? multipartBody(route.multipart, ctx.config.http.maxUploadBytes) : json));
    handlers.push(async (req, res) => {
      const input = validate(route, req);
      if (route.scope) {
        assertInputCollections(principalOf(req), input.query);
        assertInputCollections(principalOf(req), input.body);
      }
      await route.handle({ ...input, req, res });
    });
    app[route.method](route.path, ...handlers);
  }
}

/**
 * For a path that is served, but not with the request's method: 405 with `Allow`. Express
 * matches paths case-insensitively and with an optional trailing slash; so does this.
 */
export function methodNotAllowed(routes: readonly Route[]): RequestHandler {
  const key = (path: string) => path.toLowerCase().replace(/\/+$/, "") || "/";
  const allowed = new Map<string, Set<string>>();
  for (const r of routes) {
    const methods = allowed.get(key(r.path)) ?? new Set<string>();
    methods.add(r.method.toUpperCase());
    if (r.method === "get") methods.add("HEAD");
    allowed.set(key(r.path), methods);
  }
  return (req, res, next) => {
    const methods = allowed.get(key(req.path));
    if (!methods) return next();
    const allow = [...methods].sort().join(", ");
    res.setHeader("Allow", allow);
    if (req.method === "OPTIONS") {
      res.status(204).end();
      return;
    }
    throw new MethodNotAllowedError(`method ${req.method} is not served at ${req.path}; accepted: ${allow}`);
  };
}
