import type { Request, Response } from "express";
import { jsonBytes } from "@docstore/shared";

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
