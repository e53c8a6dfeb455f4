import { randomUUID } from "node:crypto";
import { STATUS_CODES, type Server } from "node:http";
import type { Duplex } from "node:stream";
import type { ErrorRequestHandler, Request, RequestHandler } from "express";
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

/** The standard phrase of a status, as RFC 9110 names it (Node's table keeps 413's old name). */
export const statusTitle = (status: number): string => (status === 413 ? "Content Too Large" : (STATUS_CODES[status] ?? "Error"));

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
    return { status: e.status, title: statusTitle(e.status), detail: e.message ?? "bad request" };
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

/**
 * Node answers a request it cannot parse before Express sees it: headers over its limit (431,
 * a very long URL too), a request timeout (408), malformed HTTP (400). Those answers carry
 * problem details like every other error, instead of Node's empty body.
 */
export function answerClientErrors(server: Server, logger: Logger): void {
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
    const detail =
      status === 431 ? "request line and headers exceed the server's limit (16 KiB): send long filters in a JSON body"
      : status === 408 ? "the request was not received in time"
      : `malformed HTTP request (${err.code ?? err.message})`;
    const id = randomUUID();
    const title = statusTitle(status);
    const body = JSON.stringify({ type: "about:blank", title, status, detail, request_id: id });
    logger.warn({ req_id: id, status, code: err.code }, "request rejected");
    socket.end(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
