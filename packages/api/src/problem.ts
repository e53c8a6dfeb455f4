import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { ErrorRequestHandler, Request, RequestHandler } from "express";
import { AppError, isSqliteBusy, RateLimitedError, type ErrorKind, type Logger } from "@docstore/shared";
import { audit } from "./audit.ts";

/** The one mapping from what went wrong to an HTTP status (its title: `statusTitle`). */
const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  rate_limited: 429,
  not_found: 404,
  unsupported: 415,
  method_not_allowed: 405,
  headers_too_large: 431,
  too_large: 413,
  upstream: 502,
  unavailable: 503,
  insufficient_storage: 507,
};

/** The standard phrase of a status, as RFC 9110 names it (Node's table keeps 413's old name). */
export const statusTitle = (status: number): string => (status === 413 ? "Content Too Large" : (STATUS_CODES[status] ?? "Error"));

/**
 * What a 503 or a 507 asks clients to wait before retrying: a dependency that is down is
 * usually back soon, and space can return at any moment (an operator frees some, the volume
 * grows, the index's maintenance removes old versions).
 */
export const RETRY_AFTER_SECONDS = 5;

interface Problem {
  status: number;
  title: string;
  detail: string;
  extras?: Record<string, unknown>;
  /** Seconds for Retry-After; a 503 or 507 without one asks for RETRY_AFTER_SECONDS. */
  retryAfter?: number;
}

/** Other errors that carry a 4xx status (Express's and its middleware's): the client's fault. */
function fromFramework(err: unknown): Problem | null {
  const e = err as { status?: number; message?: string };
  if (typeof e.status === "number" && e.status >= 400 && e.status < 500) {
    return { status: e.status, title: statusTitle(e.status), detail: e.message ?? "bad request" };
  }
  return null;
}

/**
 * SQLite's answer when another connection held a database's write lock past the busy timeout
 * (a checkpoint, a large transaction of another process): that write was not made, and the
 * same request a moment later usually goes through.
 */
function fromBusyDatabase(err: unknown): Problem | null {
  if (!isSqliteBusy(err)) return null;
  const code = (err as { code: string }).code;
  return {
    status: 503,
    title: statusTitle(503),
    detail: `the catalog is busy (${code}: another writer held it too long); retry after \`Retry-After\` seconds`,
  };
}

/**
 * How long a client may go on sending a body that will not be read (a 413, a 401 before an
 * upload) after it was answered: long enough to read the answer and stop, after which the
 * connection is closed rather than read without end. Closing at once could lose the answer:
 * a connection closed with unread bytes is reset, and a reset discards what the client had
 * not read yet.
 */
export const LINGER_MS = 5000;

/** Connections answered while their request was still arriving: nothing more is written to them. */
export const answeredEarly = new WeakSet<Socket>();

function lingerThenClose(req: Request, res: Parameters<RequestHandler>[1]) {
  res.once("finish", () => {
    if (req.complete) return;
    answeredEarly.add(req.socket);
    const timer = setTimeout(() => req.socket.destroy(), LINGER_MS).unref();
    req.once("end", () => {
      // The request arrived whole after all: what comes next on the connection is a new one.
      clearTimeout(timer);
      answeredEarly.delete(req.socket);
    });
    req.socket.once("close", () => clearTimeout(timer));
  });
}

function send(req: Request, res: Parameters<RequestHandler>[1], p: Problem) {
  if (!req.complete) lingerThenClose(req, res);
  const retryAfter = p.retryAfter ?? (p.status === 503 || p.status === 507 ? RETRY_AFTER_SECONDS : undefined);
  if (retryAfter !== undefined) res.set("Retry-After", String(retryAfter));
  // RFC 6750: a 401 names the scheme it wants.
  if (p.status === 401) res.set("WWW-Authenticate", 'Bearer realm="docstore"');
  res
    .status(p.status)
    .type("application/problem+json")
    .json({ type: "about:blank", title: p.title, status: p.status, detail: p.detail, instance: req.path, request_id: req.id, ...p.extras });
}

/** The one place errors become responses: RFC 9457 problem details. */
export function problemHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const retryAfter = err instanceof RateLimitedError ? err.retryAfterSeconds : undefined;
    const p =
      err instanceof AppError
        ? { status: STATUS[err.kind], title: statusTitle(STATUS[err.kind]), detail: err.message, extras: err.extras, retryAfter }
        : (fromBusyDatabase(err) ?? fromFramework(err));
    const log = req.log ?? logger;
    if (p && p.status < 500) {
      log.warn({ status: p.status, detail: p.detail }, "request rejected");
      if (p.status === 401) audit(req, "token.refused", { reason: p.detail });
      else if (p.status === 403) audit(req, "access.denied", { reason: p.detail });
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
