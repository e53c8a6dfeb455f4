import type { Express, Request, RequestHandler } from "express";
import multer, { MulterError } from "multer";
import { BadRequestError } from "@docstore/shared";
import type { AppContext } from "./context.ts";
import { requireScope } from "./auth.ts";
import type { Route } from "./route.ts";
import { parse } from "./schemas.ts";

/** Only a JSON object counts as a body whose fields stand in for the query's. */
function jsonObject(body: unknown): Record<string, unknown> {
  return body !== null && typeof body === "object" && !Array.isArray(body) ? { ...body } : {};
}

/** Validates in the order the errors are reported: the query, then the file, then the body. */
function validate(route: Route, req: Request) {
  let query;
  if (route.query && route.queryInBody) query = parse(route.query, { ...req.query, ...jsonObject(req.body) }, "request");
  else if (route.query) query = parse(route.query, req.query, "query");
  if (route.multipart && !req.file) throw new BadRequestError(`multipart form: field '${route.multipart.file}' is required`);
  const body = route.body ? parse(route.body, req.body ?? {}, "body") : undefined;
  return { query, body, file: req.file };
}

/**
 * Serves each route: the token check its scope asks for, multer for an upload, then validation
 * and the handler. Errors go on to the app's problem handler, which Express 5 also gives the
 * handlers' rejected promises.
 */
export function mountRoutes(app: Express, ctx: AppContext, routes: readonly Route[]): void {
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: ctx.config.http.maxUploadBytes, files: 1, fields: 8, fieldSize: 1024 * 1024, parts: 16 },
  });
  for (const route of routes) {
    const handlers: RequestHandler[] = [];
    if (route.scope) handlers.push(requireScope(ctx.authenticate, route.scope));
    if (route.multipart) {
      const parse = upload.single(route.multipart.file);
      // busboy's errors (a malformed part header, a form cut short) are the client's too.
      handlers.push((req, res, next) =>
        parse(req, res, (err?: unknown) =>
          next(err && !(err instanceof MulterError) ? new BadRequestError(`multipart form: ${(err as Error).message}`) : err),
        ),
      );
    }
    handlers.push(async (req, res) => {
      await route.handle({ ...validate(route, req), req, res });
    });
    app[route.method](route.path, ...handlers);
  }
}
