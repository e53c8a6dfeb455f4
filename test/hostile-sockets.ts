/** Hostile-input cases (test/hostile-cases.ts) below fetch: malformed HTTP, header floods, endless and slow bodies. */
import { chunk, head } from "./raw-http.ts";
import { type Answer, auth, B, caseList, JSON_TYPE, MULTIPART, part, socket, type Target } from "./hostile-requests.ts";

const { cases, add } = caseList();

const TEXT = "/load_text_to_collection";
const DOCUMENT = "/load_document_to_collection";
/** The head of a GET of the collection list, with the token and these headers. */
const list = (t: Target, headers: Record<string, string> = {}) => head("GET", "/get_list_of_collection", { ...auth(t), ...headers });
/** The head of a POST to `path` in the test's collection, with the token and these headers. */
const post = (t: Target, path: string, headers: Record<string, string | number>) =>
  head("POST", `${path}?collection_name=${t.collection}`, { ...auth(t), ...headers });
/** A chunked body to `path` that starts with `start` and then never ends. */
function endless(t: Target, path: string, contentType: string, start: string): Promise<Answer> {
  const block = chunk("x".repeat(64 * 1024));
  const opening = Buffer.from(post(t, path, { "content-type": contentType, "transfer-encoding": "chunked" }));
  return socket(t, Buffer.concat([opening, chunk(start)]), { stream: () => block });
}
/** A body to `path` of the declared length, sent a byte a second. */
const dripped = (t: Target, path: string, contentType: string, length: number, body: string) =>
  socket(t, post(t, path, { "content-type": contentType, "content-length": length }), { drip: [...body] });

const manyHeaders = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, "1"]));
for (const [label, n] of [
  ["101", 100],
  ["1,000", 1000],
  ["5,000", 5000],
] as const) {
  add("http", `${label} header fields`, 431, (t) => socket(t, list(t, { ...manyHeaders(n), connection: "close" })));
}
add("http", "a header value of 20 KB", 431, (t) => socket(t, list(t, { "x-big": "v".repeat(20_000) })));
add("http", "a header value of 1 MB", 431, (t) => socket(t, list(t, { "x-big": "v".repeat(1024 * 1024) })));
add("http", "a request target of 20 KB", 431, (t) =>
  socket(t, head("GET", `/get_relevant_documents?query=${"q".repeat(20_000)}`, auth(t))),
);
add("http", "a NUL in a header value", 400, (t) => socket(t, list(t, { "x-a": "a\u0000b" })));
add("http", "a space in a header name", 400, (t) => socket(t, list(t, { "x a": "b" })));
add("http", "a raw NUL in the target", 400, (t) => socket(t, head("GET", "/get_relevant_documents?query=a\u0000b", auth(t))));
add("http", "raw UTF-8 in the target", 400, (t) =>
  socket(t, Buffer.from(head("GET", "/get_relevant_documents?query=café", auth(t)), "utf8")),
);
add("http", "an invalid method", 400, (t) => socket(t, head("G(T", "/get_list_of_collection", auth(t))));
for (const version of ["0.9", "2.0", "1.2", "9.9"]) {
  add("http", `HTTP/${version} in the request line`, 400, (t) =>
    socket(t, `GET /get_list_of_collection HTTP/${version}\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\nConnection: close\r\n\r\n`),
  );
}
add("http", "an HTTP/2 connection preface", 400, (t) => socket(t, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
add("http", "a TLS hello", 400, (t) => socket(t, Buffer.from("16030100a5010000a10303", "hex")));
add("http", "no Host header", 400, (t) =>
  socket(t, `GET /get_list_of_collection HTTP/1.1\r\nAuthorization: Bearer ${t.token}\r\nConnection: close\r\n\r\n`),
);
add("http", "Content-Length not a number", 400, (t) => socket(t, post(t, TEXT, { "content-length": "abc" }) + "{}"));
add("http", "two different Content-Lengths", 400, (t) => socket(t, post(t, TEXT, { "content-length": "2\r\nContent-Length: 3" }) + "{}"));
add("http", "Content-Length with Transfer-Encoding", 400, (t) =>
  socket(t, post(t, TEXT, { "content-length": 5, "transfer-encoding": "chunked" }) + "0\r\n\r\n"),
);
add("http", "a malformed chunk size", 400, (t) =>
  socket(t, post(t, TEXT, { "content-type": JSON_TYPE, "transfer-encoding": "chunked" }) + "zz\r\n{}\r\n0\r\n\r\n"),
);
add("http", "an unknown Transfer-Encoding", 400, (t) => socket(t, post(t, TEXT, { "transfer-encoding": "gzip, rot13" }) + "{}"));
add(
  "http",
  "a Content-Length far past MAX_BODY_BYTES",
  413,
  (t) => socket(t, post(t, TEXT, { "content-type": JSON_TYPE, "content-length": 10 ** 12 }) + '{"text":"'),
  true,
);
add(
  "http",
  "a Content-Length far past MAX_UPLOAD_BYTES",
  413,
  (t) => socket(t, post(t, DOCUMENT, { "content-type": MULTIPART, "content-length": 10 ** 12 }) + part("file", "x", "a.txt")),
  true,
);
add("http", "a JSON body that never ends", 413, (t) => endless(t, TEXT, JSON_TYPE, '{"text'), true);
add(
  "http",
  "a file part that never ends",
  413,
  (t) =>
    endless(
      t,
      DOCUMENT,
      MULTIPART,
      part("metadata", "{}") +
        `--${B}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n`,
    ),
  true,
);
add(
  "http",
  "a text field that never ends",
  413,
  (t) => endless(t, DOCUMENT, MULTIPART, `--${B}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n`),
  true,
);
add("http", "a connection that sends nothing", 408, (t) => socket(t, ""), true);
add(
  "http",
  "headers a byte per second",
  408,
  (t) => socket(t, "G", { drip: [...`ET /get_list_of_collection HTTP/1.1\r\nHost: x\r\n${"X-Slow: 1\r\n".repeat(20)}\r\n`] }),
  true,
);
add("http", "a JSON body a byte per second", 408, (t) => dripped(t, TEXT, JSON_TYPE, 200, `{"text":"${"s".repeat(180)}"}`), true);
add("http", "a form a byte per second", 408, (t) => dripped(t, DOCUMENT, MULTIPART, 300, part("file", "s".repeat(200), "a.txt")), true);
add(
  "http",
  "a body shorter than its Content-Length",
  408,
  (t) => socket(t, post(t, TEXT, { "content-type": JSON_TYPE, "content-length": 100 }) + '{"text":"x"}'),
  true,
);

export const SOCKET_CASES = cases;
