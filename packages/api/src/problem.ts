import type { ErrorRequestHandler, Request, RequestHandler } from "express";
import { STATUS_CODES } from "node:http";
import { AppError, type ErrorKind, type Logger } from "@docstore/shared";

/** The one mapping from what went wrong to an HTTP status. */
const STATUS: Record<ErrorKind, { status: number; title: string }> = {
  invalid: { status: 400, title: "Bad Request" },
  unauthenticated: { status: 401, title: "Unauthorized" },
  forbidden: { status: 403, title: "Forbidden" },
  not_found: { status: 404, title: "Not Found" },
  unsupported: { status: 415, title: "Unsupported Media Type" },
  too_large: { status: 413, title: "Content Too Large" },
  upstream: { status: 502, title: "Bad Gateway" },
  unavailable: { status: 503, title: "Service Unavailable" },
};

/** What a 503 asks clients to wait before retrying: a dependency that is down is usually back soon. */
export const RETRY_AFTER_SECONDS = 5;

interface Problem {
  status: number;
  title: string;
  detail: string;
  extras?: Record<string, unknown>;
}

/** Other errors that carry a 4xx status (Express's own, a 405): the client's fault. */
function fromFramework(err: unknown): Problem | null {
  const e = err as { status?: number; message?: string };
  if (typeof e.status === "number" && e.status >= 400 && e.status < 500) {
    return { status: e.status, title: STATUS_CODES[e.status] ?? "Bad Request", detail: e.message ?? "bad request" };
  }
  return null;
}

function send(req: Request, res: Parameters<RequestHandler>[1], p: Problem) {
  if (p.status === 503) res.set("Retry-After", String(RETRY_AFTER_SECONDS));
  res
    .status(p.status)
    .type("application/problem+json")
    .json({ type: "about:blank", title: p.title, status: p.status, detail: p.detail, instance: req.path, request_id: req.id, ...p.extras });
}

/** The one place errors become responses: RFC 9457 problem details. */
export function problemHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const p = err instanceof AppError ? { ...STATUS[err.kind], detail: err.message, extras: err.extras } : fromFramework(err);
    const log = (req.log ?? logger);
    if (p && p.status < 500) {
      log.warn({ status: p.status, detail: p.detail }, "request rejected");
      send(req, res, p);
    } else if (p) {
      log.error({ err, status: p.status }, "dependency failure");
      send(req, res, p);
    } else {
      log.error({ err }, "unhandled error");
      send(req, res, { status: 500, title: "Internal Server Error", detail: "internal error; see the server log for request " + req.id });
    }
  };
}

export const notFound: RequestHandler = (req, res) =>
  send(req, res, { status: 404, title: "Not Found", detail: `no operation ${req.method} ${req.path}; see /openapi.json` });
