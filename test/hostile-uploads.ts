/** Hostile-input cases (test/hostile-cases.ts) for uploads and for JSON operations sent another type. */
import {
  B,
  caseList,
  deepObjects,
  form,
  JSON_TYPE,
  json,
  MULTIPART,
  OPS,
  part,
  textFile,
  type Op,
  type Parts,
  type Target,
} from "./hostile-requests.ts";

const { cases, add } = caseList();

// Uploads: forms missing, duplicated, truncated, not forms at all, too many, too large, of the wrong type.
const upload = (t: Target, p: Parts) => OPS.load_document(t, p);
/** A form with a file part, then the parts given. */
const withFile = (...parts: [string, string | Blob][]): Parts => ({ body: form([["file", textFile()], ...parts]) });
/** A form whose only part is a file of these bytes. */
const fileOf = (bytes: Buffer, type?: string): Parts => ({ body: form([["file", new Blob([bytes], type ? { type } : {})]]) });
const raw = (body: string | Buffer, contentType = MULTIPART) => ({ body, contentType });
const UPLOADS: [string, number, (t: Target) => Parts][] = [
  ["no file part", 400, () => ({ body: form([["metadata", "{}"]]) })],
  ["an empty form", 400, () => raw(`--${B}--\r\n`)],
  ["the file in another part", 400, () => ({ body: form([["document", textFile()]]) })],
  ["a file in the metadata part", 400, () => ({ body: form([["metadata", textFile("{}")]]) })],
  ["two files", 400, () => withFile(["file", textFile()])],
  ["two metadata fields", 400, () => withFile(["metadata", "{}"], ["metadata", "{}"])],
  ["an unknown field", 400, () => withFile(["meta_data", "{}"])],
  ["metadata that is not JSON", 400, () => withFile(["metadata", "{status: open}"])],
  ["metadata an array", 400, () => withFile(["metadata", "[1,2]"])],
  ["metadata a string", 400, () => withFile(["metadata", '"open"'])],
  ["metadata null", 400, () => withFile(["metadata", "null"])],
  ["metadata 100,000 levels deep", 400, () => withFile(["metadata", deepObjects(100_000)])],
  ["metadata with a bad key", 400, () => withFile(["metadata", '{"A B":1}'])],
  ["metadata over its limit", 400, () => withFile(["metadata", JSON.stringify({ a: "x".repeat(70_000) })])],
  ["a truncated form", 400, () => raw(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello`)],
  ["a truncated part header", 400, () => raw(`--${B}\r\nContent-Disposition: form-da`)],
  ["a part without headers", 400, () => raw(`--${B}\r\nnot a header\r\n\r\nhello\r\n--${B}--\r\n`)],
  ["no boundary parameter", 400, () => raw(part("file", "hello", "a.txt") + `--${B}--\r\n`, "multipart/form-data")],
  [
    "another boundary than the body's",
    400,
    () => raw(part("file", "hello", "a.txt") + `--${B}--\r\n`, "multipart/form-data; boundary=OTHER"),
  ],
  ["plain text under a multipart type", 400, () => raw("just some text")],
  ["JSON under a multipart type", 400, () => raw('{"text":"hello"}')],
  ["an empty body under a multipart type", 400, () => raw("")],
  ["binary garbage under a multipart type", 400, () => raw(Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)))],
  ["1,000 files", 400, () => ({ body: form(Array.from({ length: 1000 }, () => ["file", textFile()] as [string, Blob])) })],
  ["100 text fields", 400, () => raw(Array.from({ length: 100 }, (_, i) => part(`f${i}`, "v")).join("") + `--${B}--\r\n`)],
  ["a part name of 10,000 characters", 400, () => raw(part("n".repeat(10_000), "v") + part("file", "hello", "a.txt") + `--${B}--\r\n`)],
  ["a file over MAX_UPLOAD_BYTES", 413, (t) => ({ body: form([["file", textFile("x".repeat(t.maxUploadBytes + 1))]]) })],
  ["a metadata field of 2 MB", 413, () => withFile(["metadata", "x".repeat(2 * 1024 * 1024)])],
  ["a JSON body", 415, () => json({ text: "hello" })],
  ["a text/plain body", 415, () => raw("hello", "text/plain")],
  ["a form-urlencoded body", 415, () => raw("file=hello", "application/x-www-form-urlencoded")],
  ["an octet-stream body", 415, () => raw(Buffer.from("hello"), "application/octet-stream")],
  ["a PNG file", 415, () => fileOf(Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"), "image/png")],
  ["an ELF executable", 415, () => fileOf(Buffer.concat([Buffer.from("7f454c46020101", "hex"), Buffer.alloc(64)]))],
  ["a ZIP that is not a document", 415, () => fileOf(Buffer.concat([Buffer.from("504b0304", "hex"), Buffer.alloc(60)]))],
  ["random binary bytes", 415, () => fileOf(Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 2654435761) % 251)))],
];
for (const [name, status, parts] of UPLOADS) add("load_document", name, status, (t) => upload(t, parts(t)));

// JSON operations sent something else.
for (const op of ["load_text", "search_post", "tag_post", "load_texts"] as Op[]) {
  add(op, "a multipart form", 415, (t) => OPS[op](t, { body: form([["text", "hello"]]), contentType: undefined }));
  add(op, "XML", 415, (t) => OPS[op](t, { body: "<text>hello</text>", contentType: "application/xml" }));
  add(op, "form-urlencoded fields", 415, (t) => OPS[op](t, { body: "text=hello", contentType: "application/x-www-form-urlencoded" }));
  add(op, "an unknown charset", 415, (t) => OPS[op](t, { body: "{}", contentType: "application/json; charset=klingon" }));
  add(op, "a gzip body that is not gzip", 400, (t) =>
    OPS[op](t, { body: "{}", contentType: JSON_TYPE, headers: { "content-encoding": "gzip" } }),
  );
  add(op, "an unknown Content-Encoding", 415, (t) =>
    OPS[op](t, { body: "{}", contentType: JSON_TYPE, headers: { "content-encoding": "zstd-or-so" } }),
  );
}

export const UPLOAD_CASES = cases;
