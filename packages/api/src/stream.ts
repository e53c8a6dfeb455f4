import type { Request, Response } from "express";

/** Resolves once the socket takes more; rejects if the client went away meanwhile. */
function drained(res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      res.off("close", gone);
      resolve();
    };
    const gone = () => {
      res.off("drain", done);
      reject(new Error("client closed the connection"));
    };
    res.once("drain", done);
    res.once("close", gone);
  });
}

async function write(res: Response, chunk: string): Promise<void> {
  if (res.destroyed || res.writableEnded) throw new Error("client closed the connection");
  if (!res.write(chunk)) await drained(res);
}

const members = (fields: Record<string, unknown>) =>
  Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)},`)
    .join("");

const COMMA = Buffer.from(",");

/**
 * The bytes of JSON.stringify(body), each element of its array members serialized and encoded
 * on its own. Serialized whole, one character past U+00FF in one text (a Greek letter) made the
 * whole answer a string of two-byte characters, slower to write and, for 100 documents of 1 KB,
 * larger than V8's largest ordinary heap object (mapped afresh for each answer), then copied
 * once more into bytes: 0.37 ms against 0.14 for such an answer (docs/benchmarks.md).
 */
export function jsonBytes(body: Record<string, unknown>): Buffer {
  const parts: Buffer[] = [];
  let next = "{";
  for (const [key, value] of Object.entries(body)) {
    if (!Array.isArray(value)) {
      const json = JSON.stringify(value);
      if (json === undefined) continue; // as JSON.stringify leaves out undefined, functions, symbols
      parts.push(Buffer.from(`${next}${JSON.stringify(key)}:${json}`));
    } else {
      parts.push(Buffer.from(`${next}${JSON.stringify(key)}:[`));
      for (let i = 0; i < value.length; i++) {
        if (i > 0) parts.push(COMMA);
        parts.push(Buffer.from(JSON.stringify(value[i]) ?? "null"));
      }
      parts.push(Buffer.from("]"));
    }
    next = ",";
  }
  parts.push(Buffer.from(next === "{" ? "{}" : "}"));
  return Buffer.concat(parts);
}

/** Sends `body` as res.json does (application/json, UTF-8), written by jsonBytes. */
export function sendJson(res: Response, body: Record<string, unknown>): void {
  res.type("application/json").send(jsonBytes(body));
}

/**
 * Answers `{...head, "<key>": [items], ...tail}` while `pages` are produced, one page written
 * before the next is asked for, waiting whenever the socket's buffer is full: memory holds
 * about one page however long the list. The first page is read before the status is sent, so
 * that an error there is still a problem response; an error after it cuts the answer short
 * (the client sees an incomplete body, never a well-formed partial list).
 */
export async function streamList(
  req: Request,
  res: Response,
  head: Record<string, unknown>,
  key: string,
  pages: AsyncIterable<unknown[]>,
  tail: Record<string, unknown>,
): Promise<void> {
  const iterator = pages[Symbol.asyncIterator]();
  let next = await iterator.next();
  res.status(200).type("application/json");
  try {
    await write(res, `{${members(head)}${JSON.stringify(key)}:[`);
    let first = true;
    while (!next.done) {
      if (next.value.length > 0) {
        await write(res, (first ? "" : ",") + next.value.map((item) => JSON.stringify(item)).join(","));
        first = false;
      }
      next = await iterator.next();
    }
    const rest = members(tail);
    res.end(`]${rest ? `,${rest.slice(0, -1)}` : ""}}`);
  } catch (err) {
    await iterator.return?.();
    req.log.warn({ err }, "streamed list cut short");
    res.destroy();
  }
}
