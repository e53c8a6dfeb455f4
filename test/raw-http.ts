/**
 * HTTP/1.1 over a bare socket (node:net), for the requests fetch cannot send: malformed
 * request lines and headers, truncated or endless bodies, bytes dripped one at a time.
 */
import net from "node:net";

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON when the body is JSON, else the text. */
  body: any;
  /** Bytes the client had written when the answer's head arrived. */
  sentBeforeAnswer: number;
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>;
}

export interface RawOptions {
  /** Written after `head`, one call at a time, each time the socket takes more, until an answer or `maxBytes`. */
  stream?: () => Buffer | string;
  /** Written after `head`, one item per `dripEveryMs`, while no answer has come. */
  drip?: (Buffer | string)[];
  dripEveryMs?: number;
  /** Stop streaming after this many bytes (the test fails: no answer came). */
  maxBytes?: number;
}

/** The first complete response in `data`, if there is one yet. */
function parse(data: Buffer): Omit<RawReply, "closed" | "sentBeforeAnswer"> | null {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const [statusLine, ...lines] = data.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers["content-length"] ?? 0);
  if (data.length < end + 4 + length) return null;
  const text = data.subarray(end + 4, end + 4 + length).toString("utf8");
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status, headers, body };
}

/**
 * Sends `head` (and what `options` add) to `url`'s host and port and resolves with the first
 * response, or rejects when the connection closes without one.
 */
export function rawRequest(url: string, head: Buffer | string, options: RawOptions = {}): Promise<RawReply> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let sent = 0;
  let answered = false;
  let received = Buffer.alloc(0);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const write = (chunk: Buffer | string) => {
    sent += Buffer.byteLength(chunk);
    return socket.write(chunk);
  };
  return new Promise<RawReply>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const stop = () => clearInterval(timer);
    socket.on("error", () => {}); // a reset after the answer is expected; `close` follows
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const reply = answered ? null : parse(received);
      if (reply) {
        answered = true;
        stop();
        resolve({ ...reply, sentBeforeAnswer: sent, closed });
      }
    });
    socket.once("close", () => {
      stop();
      if (!answered)
        reject(
          new Error(`connection closed without an answer after ${sent} bytes sent; received: ${received.toString("latin1").slice(0, 200)}`),
        );
    });
    socket.once("connect", () => {
      write(head);
      if (options.stream) {
        const more = options.stream;
        const limit = options.maxBytes ?? 256 * 1024 * 1024;
        const pump = () => {
          while (!answered && !socket.destroyed && sent < limit) if (!write(more())) return void socket.once("drain", pump);
        };
        pump();
      }
      if (options.drip) {
        const items = [...options.drip];
        timer = setInterval(() => {
          const next = items.shift();
          if (next === undefined || answered || socket.destroyed) return stop();
          write(next);
        }, options.dripEveryMs ?? 1000);
      }
    });
  });
}

/** A request head: request line, Host, the given headers, the blank line. */
export function head(method: string, target: string, headers: Record<string, string | number> = {}, host = "127.0.0.1"): string {
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/** One chunk of a chunked body. */
export const chunk = (data: Buffer | string) =>
  Buffer.concat([Buffer.from(`${Buffer.byteLength(data).toString(16)}\r\n`), Buffer.from(data), Buffer.from("\r\n")]);
