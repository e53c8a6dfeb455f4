/**
 * Reading request bodies so that none is ever dropped: a body is read, or refused with a
 * status and a detail that say what to send instead.
 *   - JSON operations read a body that holds JSON whatever its declared type: `curl -d` and
 *     Python's urllib declare application/x-www-form-urlencoded for the JSON they send. A body
 *     that is not JSON is a 415 (a 400 when it was declared JSON).
 *   - Uploads take multipart/form-data only; any malformed form is a 400, never a 500.
 *   - A body over its limit is answered 413 as soon as the limit is passed: body-parser and
 *     multer read a refused body to its end before they report, and a client that never stops
 *     sending would never be answered (problem.ts then closes the connection).
 */
import { isUtf8 } from "node:buffer";
import express, { type NextFunction, type Request, type RequestHandler } from "express";
import multer, { MulterError, type StorageEngine } from "multer";
import { BadRequestError, TooLargeError, UnsupportedMediaTypeError, tooDeep, type AppError } from "@docstore/shared";
import type { Multipart } from "./route.ts";

/** "Text/HTML; charset=UTF-8" → "text/html". */
export function mediaType(header: string | undefined): string | undefined {
  const type = header?.split(";")[0]?.trim().toLowerCase();
  return type ? type : undefined;
}

const isJsonType = (type: string) => type === "application/json" || type.endsWith("+json");

/** A body is present when its length is announced and not zero, or it is chunked. */
function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  return headers["transfer-encoding"] !== undefined || (headers["content-length"] !== undefined && headers["content-length"] !== "0");
}

const declared = (type: string | undefined) => (type ? `Content-Type ${type}` : "no Content-Type");

/** body-parser's and the stream's errors, as ours. */
function readError(err: {
  type?: string;
  status?: number;
  message?: string;
  limit?: number;
  length?: number;
  charset?: string;
  encoding?: string;
}): AppError | Error {
  switch (err.type) {
    case "entity.too.large":
      return bodyTooLarge(err.limit ?? 0, err.length);
    case "charset.unsupported":
      return new UnsupportedMediaTypeError(`body: received charset ${err.charset}; accepted: UTF-8 (charset=utf-8, or no charset)`);
    case "encoding.unsupported":
      return new UnsupportedMediaTypeError(`body: received Content-Encoding ${err.encoding}; accepted: gzip, deflate, br or none`);
    case "encoding.invalid":
      return new BadRequestError(`body: ${err.message}; accepted: UTF-8 text (or the charset its Content-Type names)`);
    case "request.aborted":
    case "request.size.invalid":
      return new BadRequestError(`body: ${err.message ?? "incomplete"}; the body must be sent whole, as long as its Content-Length says`);
  }
  if (typeof err.status === "number" && err.status >= 400 && err.status < 500)
    return new BadRequestError(`body: ${err.message ?? "unreadable"}`);
  return err as Error;
}

/** Bytes that are not the UTF-8 they are declared (or defaulted) to be are refused, not replaced with U+FFFD. */
function verifyUtf8(_req: unknown, _res: unknown, buf: Buffer, encoding: string) {
  if (/^utf-?8$/i.test(encoding) && !isUtf8(buf)) {
    throw Object.assign(new Error(`received ${buf.byteLength} bytes that are not valid UTF-8`), { type: "encoding.invalid" });
  }
}

/**
 * A `next` that passes on only its first call, and calls it with `refuse()` as soon as the
 * request is known to carry more than `limit` bytes: by its Content-Length at once, else by
 * counting them as they arrive. `refused` is true when the body must not be read at all.
 */
function bounded(req: Request, next: NextFunction, limit: number, refuse: () => AppError): { next: NextFunction; refused: boolean } {
  let called = false;
  const count = (chunk: Buffer) => {
    received += chunk.byteLength;
    if (received > limit) once(refuse());
  };
  const once: NextFunction = (err?: unknown) => {
    if (called) return;
    called = true;
    req.off("data", count);
    next(err);
  };
  let received = 0;
  const declared = Number(req.headers["content-length"]);
  if (declared > limit) {
    once(refuse());
    return { next: once, refused: true };
  }
  // Listening in the same tick as the reader below: no chunk can flow before both listen.
  req.on("data", count);
  return { next: once, refused: false };
}

function bodyTooLarge(limit: number, length: string | number | undefined): TooLargeError {
  return new TooLargeError(
    `body: received ${length ?? `more than ${limit}`} bytes; accepted: a body of at most ${limit} bytes (the server's MAX_BODY_BYTES; MAX_UPLOAD_BYTES for a file sent to /load_document_to_collection)`,
  );
}

/** Reads a JSON operation's body into `req.body` (undefined when there is none). */
export function jsonBody(maxBytes: number): RequestHandler[] {
  const text = express.text({ type: () => true, limit: maxBytes, defaultCharset: "utf-8", verify: verifyUtf8 });
  const read: RequestHandler = (req, res, nextHandler) => {
    const type = mediaType(req.headers["content-type"]);
    if (type === "multipart/form-data" && hasBody(req.headers)) {
      throw new UnsupportedMediaTypeError(
        `body: received multipart/form-data; accepted: a JSON object sent with Content-Type: application/json (only /load_document_to_collection takes a form)`,
        type,
      );
    }
    if (!hasBody(req.headers)) return nextHandler();
    const { next, refused } = bounded(req, nextHandler, maxBytes, () => bodyTooLarge(maxBytes, req.headers["content-length"]));
    if (refused) return;
    text(req, res, (err?: unknown) => next(err ? readError(err as Parameters<typeof readError>[0]) : undefined));
  };
  const interpret: RequestHandler = (req, _res, next) => {
    const raw: unknown = req.body;
    req.body = undefined;
    if (typeof raw !== "string" || raw.trim() === "") return next();
    const type = mediaType(req.headers["content-type"]);
    try {
      req.body = JSON.parse(raw) ?? undefined;
    } catch (err) {
      const bytes = Buffer.byteLength(raw);
      if (type && isJsonType(type))
        throw new BadRequestError(
          `body: received ${bytes} bytes declared ${type} that are not valid JSON (${(err as Error).message}); accepted: one JSON object`,
        );
      throw new UnsupportedMediaTypeError(
        `body: received ${declared(type)} and ${bytes} bytes that are not JSON; accepted: a JSON object sent with Content-Type: application/json`,
        type,
      );
    }
    const deep = tooDeep(raw);
    if (deep) {
      req.body = undefined;
      throw new BadRequestError(`body: ${deep}`);
    }
    next();
  };
  return [read, interpret];
}

/** The fixed limits of an upload's form, besides the file's MAX_UPLOAD_BYTES. */
const FORM = { files: 1, fields: 8, fieldSize: 1024 * 1024, parts: 16, fieldNameSize: 100 } as const;

/** Room for the parts' boundaries and headers in a form's size bound. */
const PART_OVERHEAD = 64 * 1024;

/** Called when a request's file passes MAX_UPLOAD_BYTES: busboy says so at once, multer only once the request ends. */
const fileLimitReached = new WeakMap<Request, () => void>();

/** Memory storage that reports a file over the limit the moment busboy sees it. */
function watchedStorage(): StorageEngine {
  const memory = multer.memoryStorage();
  return {
    _handleFile(req, file, cb) {
      file.stream.once("limit", () => fileLimitReached.get(req)?.());
      memory._handleFile(req, file, cb);
    },
    _removeFile: (req, file, cb) => memory._removeFile(req, file, cb),
  };
}

/** Reads an upload's multipart/form-data into `req.file` and `req.body` (its text fields). */
export function multipartBody(form: Multipart, maxUploadBytes: number): RequestHandler[] {
  const fields = Object.keys(form.fields);
  const accepted = `multipart/form-data with the file in the part '${form.file}'${fields.length ? ` and the text field${fields.length > 1 ? "s" : ""} ${fields.map((f) => `'${f}'`).join(", ")}` : ""}`;
  const single = multer({ storage: watchedStorage(), limits: { ...FORM, fileSize: maxUploadBytes } }).single(form.file);
  // No form within the limits below is larger: one file, the text fields, the parts' headers.
  const formBytes = maxUploadBytes + FORM.fields * FORM.fieldSize + FORM.parts * PART_OVERHEAD;
  const formTooLarge = () =>
    new TooLargeError(
      `body: received more than ${formBytes} bytes; accepted: a form of at most ${formBytes} bytes (a file of at most ${maxUploadBytes} bytes, the server's MAX_UPLOAD_BYTES, and its text fields)`,
    );
  const check: RequestHandler = (req, _res, next) => {
    const type = mediaType(req.headers["content-type"]);
    if (hasBody(req.headers) && type !== "multipart/form-data") {
      throw new UnsupportedMediaTypeError(
        `body: received ${declared(type)}; accepted: ${accepted} (for a text in JSON, use /load_text_to_collection)`,
        type,
      );
    }
    next();
  };
  const read: RequestHandler = (req, res, nextHandler) => {
    const length = req.headers["content-length"];
    const { next, refused } = bounded(req, nextHandler, formBytes, formTooLarge);
    if (refused) return;
    fileLimitReached.set(req, () => next(formError(new MulterError("LIMIT_FILE_SIZE", form.file), form, accepted, maxUploadBytes, length)));
    single(req, res, (err?: unknown) => next(err ? formError(err, form, accepted, maxUploadBytes, length) : undefined));
  };
  return [check, read];
}

function formError(err: unknown, form: Multipart, accepted: string, maxUploadBytes: number, length: string | undefined): Error {
  if (!(err instanceof MulterError)) {
    // busboy's: no boundary, a truncated body, a malformed part header, and the like.
    return new BadRequestError(`body: malformed multipart/form-data (${(err as Error).message ?? String(err)}); accepted: ${accepted}`);
  }
  const field = err.field;
  switch (err.code) {
    case "LIMIT_FILE_SIZE":
      return new TooLargeError(
        `${form.file}: received a file larger than ${maxUploadBytes} bytes${length ? ` (a request of ${length} bytes)` : ""}; accepted: at most ${maxUploadBytes} bytes (the server's MAX_UPLOAD_BYTES)`,
      );
    case "LIMIT_UNEXPECTED_FILE":
    case "LIMIT_FILE_COUNT":
      if (field === form.file || field === undefined)
        return new BadRequestError(`${form.file}: received more than one file; accepted: one file per request, in the part '${form.file}'`);
      return new BadRequestError(
        `body: received a file in the part '${field}'${Object.hasOwn(form.fields, field) ? ` ('${field}' is a text field)` : ""}; accepted: the file in the part '${form.file}' (${accepted})`,
      );
    case "LIMIT_PART_COUNT":
      return new BadRequestError(
        `body: received more than ${FORM.parts} parts; accepted: ${accepted} (at most ${FORM.parts} parts, a fixed limit)`,
      );
    case "LIMIT_FIELD_COUNT":
      return new BadRequestError(`body: received more than ${FORM.fields} text fields; accepted: ${accepted}`);
    case "LIMIT_FIELD_KEY":
      return new BadRequestError(`body: received a part name longer than ${FORM.fieldNameSize} bytes; accepted: ${accepted}`);
    case "LIMIT_FIELD_VALUE":
      return new TooLargeError(
        `${field ?? "body"}: received a text field longer than ${FORM.fieldSize} bytes; accepted: at most ${FORM.fieldSize} bytes per text field (a fixed limit)`,
      );
    default:
      return new BadRequestError(`body: malformed multipart/form-data (${err.message}); accepted: ${accepted}`);
  }
}
