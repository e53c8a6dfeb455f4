/**
 * What every request must be before it is routed, beyond what Node's parser already refuses
 * (server.ts): HTTP/1, a Host header, a bounded number of header fields, and a query string whose
 * percent-encoded bytes are UTF-8 (Node's query parsing would replace them with U+FFFD, so
 * `%FF` would silently become another text).
 */
import { isUtf8 } from "node:buffer";
import type { RequestHandler } from "express";
import { BadRequestError, HeaderFieldsTooLargeError } from "@docstore/shared";

/** Apache's default LimitRequestFields: clients and proxies send a few dozen at most. */
export const MAX_HEADER_FIELDS = 100;

/** The bytes a percent-encoded text stands for; a `%` not followed by two hex digits is itself. */
function percentDecoded(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text[i] === "%" ? text.slice(i + 1, i + 3) : "";
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(text.charCodeAt(i) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

/** The first query parameter (key=value) whose percent-encoded bytes are not UTF-8, if any. */
function notUtf8(query: string): string | undefined {
  // Only an escape of a byte from 0x80 up can start a sequence that is not UTF-8.
  if (!/%[89A-Fa-f][0-9A-Fa-f]/.test(query)) return undefined;
  return query.split("&").find((pair) => !isUtf8(percentDecoded(pair)));
}

export const wellFormed: RequestHandler = (req, _res, next) => {
  // Node's parser takes any version digits (HTTP/2.0 or HTTP/0.9 written as an HTTP/1 request).
  if (req.httpVersionMajor !== 1)
    throw new BadRequestError(`request: received HTTP/${req.httpVersion} in the request line; accepted: HTTP/1.1 or HTTP/1.0`);
  if (req.httpVersion === "1.1" && !req.headers.host)
    throw new BadRequestError("headers: received no Host header; accepted: an HTTP/1.1 request with a Host header");
  const fields = req.rawHeaders.length / 2;
  if (fields > MAX_HEADER_FIELDS) {
    throw new HeaderFieldsTooLargeError(
      `headers: received ${fields} header fields; accepted: at most ${MAX_HEADER_FIELDS} (a fixed limit)`,
    );
  }
  const q = req.url.indexOf("?");
  const bad = q < 0 ? undefined : notUtf8(req.url.slice(q + 1));
  if (bad !== undefined) {
    const key = bad.split("=")[0]!;
    const decoded = percentDecoded(key.replaceAll("+", " "));
    const name = isUtf8(decoded) ? decoded.toString("utf8") : "a key";
    throw new BadRequestError(
      `${name}: received percent-encoded bytes that are not UTF-8; accepted: query parameters percent-encoded as UTF-8`,
    );
  }
  next();
};
