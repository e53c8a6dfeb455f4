/**
 * The HTTP server around the app: how long a client may take to send a request, and what a
 * request Node refuses before Express sees it (malformed HTTP, headers too large, too slow)
 * is answered with. Each such refusal is a problem-details body like every other 4xx.
 */
import http from "node:http";
import type { Socket } from "node:net";
import { randomUUID } from "node:crypto";
import type { Config, Logger } from "@docstore/shared";
import { LINGER_MS, answeredEarly } from "./problem.ts";

/** What Node's parser and timers raise, as the status and detail a client gets. */
function refusal(
  err: NodeJS.ErrnoException & { reason?: string },
  config: Config["http"],
): { status: number; title: string; detail: string } {
  switch (err.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        status: 408,
        title: "Request Timeout",
        detail: `request: not received whole in time; accepted: headers within ${config.headersTimeoutMs} ms (the server's HTTP_HEADERS_TIMEOUT_MS) and the whole request within ${config.requestTimeoutMs} ms (HTTP_REQUEST_TIMEOUT_MS)`,
      };
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 431,
        title: "Request Header Fields Too Large",
        detail: `headers: received more than ${http.maxHeaderSize} bytes of request line and headers; accepted: at most ${http.maxHeaderSize} bytes`,
      };
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { status: 413, title: "Content Too Large", detail: "body: received chunk extensions longer than the server accepts" };
    default:
      return {
        status: 400,
        title: "Bad Request",
        detail: `request: malformed HTTP (${err.reason ?? err.message}); accepted: an HTTP/1.1 request`,
      };
  }
}

/** Errors of the connection itself: there is nobody to answer. */
const GONE = new Set(["ECONNRESET", "EPIPE", "ETIMEDOUT", "ERR_STREAM_DESTROYED"]);

/**
 * Makes the server; the app is attached as its request listener once it is built. Node checks its timers every `connectionsCheckingInterval`
 * (30 s by default, longer than a short timeout), so the interval follows the timeouts.
 */
export function createServer(config: Config["http"], logger: Logger): http.Server {
  const server = http.createServer({
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.headersTimeoutMs / 4))),
    // A request without Host reaches the app, which refuses it with a problem body (Node's own
    // refusal has none).
    requireHostHeader: false,
  });
  server.keepAliveTimeout = 65_000;
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    if (GONE.has(err.code ?? "") || !socket.writable || answeredEarly.has(socket)) {
      socket.destroy();
      return;
    }
    const p = refusal(err, config);
    // Only when no answer has begun on this connection: bytes mid-response would corrupt it.
    const inFlight = (socket as Socket & { _httpMessage?: http.ServerResponse | null })._httpMessage;
    if (!inFlight?.headersSent) {
      const id = randomUUID();
      const body = JSON.stringify({ type: "about:blank", title: p.title, status: p.status, detail: p.detail, request_id: id });
      logger.warn({ req_id: id, status: p.status, code: err.code, detail: p.detail }, "request rejected");
      socket.end(
        `HTTP/1.1 ${p.status} ${p.title}\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    // The client may still be sending what was refused (an over-long URL): closing at once would
    // reset the connection, and a reset can make it lose the answer. What arrives is discarded;
    // the socket closes when the client is done or after LINGER_MS.
    answeredEarly.add(socket);
    socket.on("data", () => {}).resume();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once("close", () => clearTimeout(timer));
    socket.once("end", () => socket.destroy());
  });
  return server;
}
