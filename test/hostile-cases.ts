/**
 * The table of malformed requests that test/hostile.test.ts sends: every operation, with
 * broken or hostile names, ids, bodies, types, filters, forms, headers and timing. Each case
 * names the 4xx it must get; the test checks that it comes with problem details.
 */
import { head, rawRequest, chunk } from "./raw-http.ts";

export interface Target {
  url: string;
  token: string;
  /** A collection holding `docId`, so that a valid name never hides an error behind a 404. */
  collection: string;
  docId: string;
  maxUploadBytes: number;
  maxBodyBytes: number;
}

export interface Answer {
  status: number;
  contentType: string | undefined;
  body: any;
  /** Over a bare socket: resolves when the server has closed the connection. */
  closed?: Promise<void>;
}

export interface Case {
  op: string;
  name: string;
  status: number;
  /** Takes seconds (a timeout) or many megabytes: run once, in the embedded mode. */
  costly?: boolean;
  send(t: Target): Promise<Answer>;
}

type Query = Record<string, string | string[] | undefined>;
interface Parts {
  query?: Query;
  /** Sent as is; a string is sent as UTF-8. */
  body?: string | Buffer | FormData;
  contentType?: string;
  headers?: Record<string, string>;
  token?: string | null;
}

function target(_t: Target, path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) for (const item of v === undefined ? [] : Array.isArray(v) ? v : [v]) params.append(k, item);
  const qs = params.toString();
  return `${path}${qs ? `?${qs}` : ""}`;
}

/** One request by fetch, or by socket for a GET with a body (fetch refuses to send one). */
async function http(t: Target, method: string, path: string, p: Parts = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...p.headers };
  const token = p.token === undefined ? t.token : p.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (p.contentType !== undefined) headers["content-type"] = p.contentType;
  const where = target(t, path, p.query);
  if (method === "GET" && p.body !== undefined && !(p.body instanceof FormData)) {
    const bytes = Buffer.from(p.body);
    const r = await rawRequest(
      t.url,
      Buffer.concat([Buffer.from(head(method, where, { ...headers, "content-length": bytes.length, connection: "close" })), bytes]),
    );
    return { status: r.status, contentType: r.headers["content-type"], body: r.body };
  }
  const res = await fetch(new URL(where, t.url), { method, headers, body: p.body as RequestInit["body"] });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, contentType: res.headers.get("content-type") ?? undefined, body };
}

const JSON_TYPE = "application/json";
const json = (value: unknown) => ({ body: JSON.stringify(value), contentType: JSON_TYPE });
const textFile = (text = "a small text about herons") => new Blob([text], { type: "text/plain" });
function form(parts: [string, string | Blob, string?][]): FormData {
  const f = new FormData();
  for (const [name, value, filename] of parts) {
    if (typeof value === "string") f.append(name, value);
    else f.append(name, value, filename ?? "a.txt");
  }
  return f;
}

/** Every operation as a valid request, into which a case puts its one fault. */
const OPS = {
  load_document: (t: Target, p: Parts = {}) =>
    http(t, "POST", "/load_document_to_collection", {
      body: form([["file", textFile()]]),
      ...p,
      query: { collection_name: t.collection, ...p.query },
    }),
  load_text: (t: Target, p: Parts = {}) =>
    http(t, "POST", "/load_text_to_collection", { ...json({ text: "hello" }), ...p, query: { collection_name: t.collection, ...p.query } }),
  load_texts: (t: Target, p: Parts = {}) =>
    http(t, "POST", "/load_texts_to_collection", {
      ...json({ documents: [{ text: "hello" }] }),
      ...p,
      query: { collection_name: t.collection, ...p.query },
    }),
  search_get: (t: Target, p: Parts = {}) =>
    http(t, "GET", "/get_relevant_documents", { ...p, query: { query: "herons", collection_names: t.collection, ...p.query } }),
  search_post: (t: Target, p: Parts = {}) =>
    http(t, "POST", "/get_relevant_documents", {
      ...json({ collection_names: [t.collection] }),
      ...p,
      query: { query: "herons", ...p.query },
    }),
  tag_get: (t: Target, p: Parts = {}) =>
    http(t, "GET", "/get_content_by_tag", { ...p, query: { collection_name: t.collection, ...p.query } }),
  tag_post: (t: Target, p: Parts = {}) =>
    http(t, "POST", "/get_content_by_tag", { ...json({ tag_info: "" }), ...p, query: { collection_name: t.collection, ...p.query } }),
  list_documents: (t: Target, p: Parts = {}) =>
    http(t, "GET", "/get_list_of_documents_names", { ...p, query: { collection_name: t.collection, ...p.query } }),
  list_collections: (t: Target, p: Parts = {}) => http(t, "GET", "/get_list_of_collection", p),
  status: (t: Target, p: Parts = {}) =>
    http(t, "GET", "/get_document_status", { ...p, query: { collection_name: t.collection, id_value: t.docId, ...p.query } }),
  delete_document: (t: Target, p: Parts = {}) =>
    http(t, "DELETE", "/delete_document_from_collection", {
      ...p,
      query: { collection_name: t.collection, id_value: "no-such-doc", ...p.query },
    }),
  delete_collection: (t: Target, p: Parts = {}) =>
    http(t, "DELETE", "/delete_collection", { ...p, query: { collection_name: "no-such-collection", ...p.query } }),
  doctor: (t: Target, p: Parts = {}) => http(t, "POST", "/doctor", { ...p, query: { collection_name: "no-such-collection", ...p.query } }),
};
type Op = keyof typeof OPS;
const ALL_OPS = Object.keys(OPS) as Op[];

const cases: Case[] = [];
const add = (op: string, name: string, status: number, send: Case["send"], costly = false) =>
  cases.push({ op, name, status, send, costly });

// Collection names that must never become a path, a key or a query: every operation refuses them.
const BAD_NAMES = [
  "../etc",
  "../../etc/passwd",
  "..%2F..%2Fetc",
  "a/b",
  "a%2Fb",
  "a\\b",
  "a%5Cb",
  "a b",
  "a\tb",
  ".",
  "..",
  "",
  "x".repeat(10_000),
  "a".repeat(65),
  "a\u0000b",
  "\u0000",
  "é",
  "' OR 1=1 --",
  '") OR true --',
  "a`b",
  "a%b",
  "a*",
  "a:b",
  "-a",
  "_a",
  "a\nb",
];
const NAME_OPS: Op[] = [
  "load_document",
  "load_text",
  "load_texts",
  "tag_get",
  "tag_post",
  "list_documents",
  "status",
  "delete_document",
  "delete_collection",
  "doctor",
];
for (const op of NAME_OPS)
  for (const name of BAD_NAMES)
    add(op, `collection_name ${JSON.stringify(name.slice(0, 20))}`, 400, (t) => OPS[op](t, { query: { collection_name: name } }));
// A search's names are split at commas and trimmed; these stay invalid after that.
for (const name of BAD_NAMES.filter((n) => /[^A-Za-z0-9_\-\s,]|^[_-]|^\s*$|.{65}/.test(n.trim()))) {
  add("search_get", `collection_names ${JSON.stringify(name.slice(0, 20))}`, 400, (t) =>
    OPS.search_get(t, { query: { collection_names: name } }),
  );
  add("search_post", `collection_names ${JSON.stringify(name.slice(0, 20))}`, 400, (t) =>
    OPS.search_post(t, json({ collection_names: [name] })),
  );
}

// Document ids likewise.
const BAD_IDS = [
  "../x",
  "../../etc/passwd",
  "a/b",
  "a%2Fb",
  " a",
  "",
  "x".repeat(10_000),
  "a\u0000",
  "' OR 1=1 --",
  ".hidden",
  "é",
  "a b",
  "a\\b",
];
for (const id of BAD_IDS) {
  const label = JSON.stringify(id.slice(0, 20));
  add("load_text", `doc_id ${label}`, 400, (t) => OPS.load_text(t, { query: { doc_id: id } }));
  add("load_document", `doc_id ${label}`, 400, (t) => OPS.load_document(t, { query: { doc_id: id } }));
  add("status", `id_value ${label}`, 400, (t) => OPS.status(t, { query: { id_value: id } }));
  add("delete_document", `id_value ${label}`, 400, (t) => OPS.delete_document(t, { query: { id_value: id } }));
  add("load_text", `metadata.sys_id ${label}`, 400, (t) => OPS.load_text(t, json({ text: "x", metadata: { sys_id: id } })));
}

// Bodies that are not JSON, not an object, or too deep, sent to every operation that reads JSON.
const deepArrays = (n: number) => "[".repeat(n) + "]".repeat(n);
const deepObjects = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);
const BROKEN_JSON: [string, string | Buffer][] = [
  ["an open brace", "{"],
  ["a cut-off field", '{"text":'],
  ["a trailing comma", '{"text":"x",}'],
  ["single quotes", "{'text':'x'}"],
  ["an extra brace", '{"text":"x"}}'],
  ["NaN", "NaN"],
  ["a cut-off array", "[1,2"],
  ["an unterminated string", '"unterminated'],
  ["a raw NUL inside a string", '{"text":"a\u0000b"}'],
  ["a NUL alone", "\u0000"],
  ["a JSON array", '["text","x"]'],
  ["a JSON number", "42"],
  ["a JSON string", '"text"'],
  ["JSON true", "true"],
  ["100,000 nested arrays", deepArrays(100_000)],
  ["100,000 nested objects", deepObjects(100_000)],
  ["100,000 levels inside a field", `{"metadata":${deepObjects(100_000)}}`],
  ["65 nested arrays", deepArrays(65)],
  ["invalid UTF-8", Buffer.concat([Buffer.from('{"text":"'), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from('"}')])],
  ["a lone UTF-8 continuation byte", Buffer.concat([Buffer.from('{"text":"a'), Buffer.from([0x80]), Buffer.from('"}')])],
  ["an overlong UTF-8 slash", Buffer.concat([Buffer.from('{"text":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])],
];
const JSON_OPS: Op[] = ["load_text", "load_texts", "search_post", "tag_post", "search_get", "tag_get"];
for (const op of JSON_OPS)
  for (const [name, body] of BROKEN_JSON) add(op, `body: ${name}`, 400, (t) => OPS[op](t, { body, contentType: JSON_TYPE }));
for (const op of ["list_documents", "list_collections", "status", "delete_document", "delete_collection", "doctor"] as Op[]) {
  add(op, "a JSON body to an operation that takes none", 400, (t) => OPS[op](t, json({ collection_name: "x" })));
  add(op, "100,000 nested arrays to an operation that takes none", 400, (t) =>
    OPS[op](t, { body: deepArrays(100_000), contentType: JSON_TYPE }),
  );
}

// Wrong types and values in a text load.
const LOAD_TEXT_BODIES: [string, unknown][] = [
  ["text a number", { text: 1 }],
  ["text null", { text: null }],
  ["text an array", { text: ["x"] }],
  ["text an object", { text: { a: 1 } }],
  ["text true", { text: true }],
  ["text empty", { text: "" }],
  ["no text", { metadata: {} }],
  ["an unknown field", { text: "x", extra: 1 }],
  ["metadata a number", { text: "x", metadata: 1 }],
  ["metadata true", { text: "x", metadata: true }],
  ["metadata an array", { text: "x", metadata: [] }],
  ["metadata a string that is not JSON", { text: "x", metadata: "{status" }],
  ["metadata a string holding an array", { text: "x", metadata: "[1]" }],
  ["metadata a string holding null", { text: "x", metadata: "null" }],
  ["metadata a string holding a number", { text: "x", metadata: "42" }],
  ["metadata a string holding a string", { text: "x", metadata: '"s"' }],
  ["metadata a string with trailing garbage", { text: "x", metadata: "{}}" }],
  ["metadata a string 100,000 levels deep", { text: "x", metadata: deepObjects(100_000) }],
  ["metadata a plain word", { text: "x", metadata: "open" }],
  ["an uppercase key", { text: "x", metadata: { Status: "x" } }],
  ["a key with a space", { text: "x", metadata: { "a b": 1 } }],
  ["a key with a NUL", { text: "x", metadata: { "a\u0000": 1 } }],
  ["a key of 200 characters", { text: "x", metadata: { ["a".repeat(200)]: 1 } }],
  ["a key with SQL", { text: "x", metadata: { "a' OR '1'='1": 1 } }],
  ["a key with a path", { text: "x", metadata: { "../a": 1 } }],
  ["a nested object value", { text: "x", metadata: { a: { b: 1 } } }],
  ["an array of objects", { text: "x", metadata: { a: [{ b: 1 }] } }],
  ["nested arrays", { text: "x", metadata: { a: [[1]] } }],
  ["a null value", { text: "x", metadata: { a: null } }],
  ["priority a word", { text: "x", metadata: { priority: "high" } }],
  ["priority a fraction", { text: "x", metadata: { priority: 1.5 } }],
  ["flag a word", { text: "x", metadata: { flag: "yes" } }],
  ["created a word", { text: "x", metadata: { created: "yesterday" } }],
  ["created an impossible date", { text: "x", metadata: { created: "2024-13-45T00:00:00Z" } }],
  ["created with an offset", { text: "x", metadata: { created: "2024-05-01T10:00:00+02:00" } }],
  ["status a number", { text: "x", metadata: { status: 1 } }],
  ["a string of 9,000 characters", { text: "x", metadata: { note: "x".repeat(9000) } }],
  ["65 keys", { text: "x", metadata: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])) }],
  ["an array of 300 items", { text: "x", metadata: { tags: Array.from({ length: 300 }, (_, i) => i) } }],
  ["70 KB of metadata", { text: "x", metadata: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, "x".repeat(7000)])) }],
];
for (const [name, body] of LOAD_TEXT_BODIES) add("load_text", name, 400, (t) => OPS.load_text(t, json(body)));
add("load_text", "a lone surrogate in a metadata value", 400, (t) =>
  OPS.load_text(t, { body: '{"text":"x","metadata":{"a":"\\ud800"}}', contentType: JSON_TYPE }),
);
add("load_text", "a number too large for a double", 400, (t) =>
  OPS.load_text(t, { body: '{"text":"x","metadata":{"a":1e400}}', contentType: JSON_TYPE }),
);
add("load_text", "__proto__ as a metadata key", 400, (t) =>
  OPS.load_text(t, { body: '{"text":"x","metadata":{"__proto__":{"polluted":1}}}', contentType: JSON_TYPE }),
);
add("load_text", "__proto__ as a body field", 400, (t) =>
  OPS.load_text(t, { body: '{"text":"x","__proto__":{"polluted":1}}', contentType: JSON_TYPE }),
);
add("load_text", "a text over MAX_BODY_BYTES", 413, (t) => OPS.load_text(t, json({ text: "x".repeat(t.maxBodyBytes) })), true);
add("load_text", "wait=maybe", 400, (t) => OPS.load_text(t, { query: { wait: "maybe" } }));
add("load_text", "collection_name twice", 400, (t) => OPS.load_text(t, { query: { collection_name: [t.collection, t.collection] } }));

const BULK_BODIES: [string, unknown][] = [
  ["no documents", {}],
  ["documents an object", { documents: {} }],
  ["documents a string", { documents: "x" }],
  ["documents empty", { documents: [] }],
  ["a number as a document", { documents: [1] }],
  ["null as a document", { documents: [null] }],
  ["an empty document", { documents: [{}] }],
  ["text a number", { documents: [{ text: 1 }] }],
  ["a bad doc_id", { documents: [{ text: "x", doc_id: "../x" }] }],
  ["metadata that is not JSON", { documents: [{ text: "x", metadata: "{bad" }] }],
  ["an unknown field in a document", { documents: [{ text: "x", extra: 1 }] }],
  ["1,001 documents", { documents: Array.from({ length: 1001 }, () => ({ text: "x" })) }],
  ["a bad second document", { documents: [{ text: "x" }, { text: "" }] }],
  ["metadata 100,000 levels deep in a string", { documents: [{ text: "x", metadata: deepObjects(100_000) }] }],
];
for (const [name, body] of BULK_BODIES) add("load_texts", name, 400, (t) => OPS.load_texts(t, json(body)));
add("load_texts", "doc_id as a query parameter", 400, (t) => OPS.load_texts(t, { query: { doc_id: "a" } }));

// Search parameters: k, query, names, in the query string and in a body.
const K_VALUES = ["0", "-1", "1e9", "abc", "1.5", "", "1e400", "Infinity", "-0", "NaN", "101", "99999999999999999999999", " ", "1,2"];
for (const k of K_VALUES) {
  add("search_get", `k=${JSON.stringify(k)}`, 400, (t) => OPS.search_get(t, { query: { k } }));
  add("search_post", `k=${JSON.stringify(k)} in the query string`, 400, (t) => OPS.search_post(t, { query: { k } }));
}
for (const k of [0, -1, 1e9, "abc", 1.5, true, [], {}, [1], -0.5])
  add("search_post", `k ${JSON.stringify(k)} in the body`, 400, (t) => OPS.search_post(t, json({ k })));
add("search_get", "k twice", 400, (t) => OPS.search_get(t, { query: { k: ["1", "2"] } }));
for (const query of ["", "   ", "x".repeat(5000)])
  add("search_get", `query of ${query.length} characters`, 400, (t) => OPS.search_get(t, { query: { query } }));
add("search_get", "no query", 400, (t) => OPS.search_get(t, { query: { query: undefined } }));
add("search_get", "query twice", 400, (t) => OPS.search_get(t, { query: { query: ["a", "b"] } }));
for (const query of [1, [], {}, "", null])
  add("search_post", `query ${JSON.stringify(query)} in the body`, 400, (t) => OPS.search_post(t, json({ query })));
for (const names of [1, {}, [1], [[]], [], "", [""], Array.from({ length: 101 }, (_, i) => `c${i}`), true]) {
  add("search_post", `collection_names ${JSON.stringify(names).slice(0, 30)}`, 400, (t) =>
    OPS.search_post(t, json({ collection_names: names })),
  );
}
for (const filter of [1, {}, [], true, { status: "open" }, ["status=open"]]) {
  add("search_post", `metadata ${JSON.stringify(filter)}`, 400, (t) => OPS.search_post(t, json({ metadata: filter })));
  add("tag_post", `tag_info ${JSON.stringify(filter)}`, 400, (t) => OPS.tag_post(t, json({ tag_info: filter })));
}
add("search_get", "an unknown parameter", 400, (t) => OPS.search_get(t, { query: { filter: "status=open" } }));
add("search_get", "collection_names[] (qs style)", 400, (t) => OPS.search_get(t, { query: { "collection_names[]": "a" } }));
add("search_get", "an unknown collection", 404, (t) => OPS.search_get(t, { query: { collection_names: "no-such-collection" } }));

// Paging parameters.
for (const [op, limit] of (["tag_get", "list_documents"] as Op[]).flatMap((op) =>
  ["0", "-1", "abc", "1001", "1.5", "", "1e9"].map((l) => [op, l] as const),
)) {
  add(op, `limit=${JSON.stringify(limit)}`, 400, (t) => OPS[op](t, { query: { limit } }));
}
for (const op of ["tag_get", "list_documents"] as Op[]) {
  for (const cursor of ["garbage", "x".repeat(600), "eyJ4IjoxfQ", "' OR 1=1 --", "../../etc/passwd"])
    add(op, `cursor ${JSON.stringify(cursor.slice(0, 20))}`, 400, (t) => OPS[op](t, { query: { cursor } }));
}
add("tag_post", "limit in the body", 400, (t) => OPS.tag_post(t, json({ limit: 0 })));
add("list_documents", "an unknown collection", 404, (t) => OPS.list_documents(t, { query: { collection_name: "no-such-collection" } }));
add("list_collections", "an unknown parameter", 400, (t) => OPS.list_collections(t, { query: { verbose: "1" } }));
add("status", "no id_value", 400, (t) => OPS.status(t, { query: { id_value: undefined } }));
add("status", "an unknown document", 404, (t) => OPS.status(t, { query: { id_value: "no-such-doc" } }));
add("delete_document", "no collection_name", 400, (t) => OPS.delete_document(t, { query: { collection_name: undefined } }));
add("delete_document", "an unknown document", 404, (t) => OPS.delete_document(t));
add("delete_collection", "an unknown collection", 404, (t) => OPS.delete_collection(t));
add("delete_collection", "no collection_name", 400, (t) => OPS.delete_collection(t, { query: { collection_name: undefined } }));
for (const repair of ["yes", "2", "TRUE", "true,true", "null"])
  add("doctor", `repair ${JSON.stringify(repair)}`, 400, (t) => OPS.doctor(t, { query: { repair } }));
add("doctor", "an unknown parameter", 400, (t) => OPS.doctor(t, { query: { fix: "true" } }));

// Every error of docs/filters.md, as a search filter and as a tag filter, in the query string and in a body.
const BAD_FILTERS = [
  "status",
  "a=1^status",
  "status~open",
  "statusCONTAINSopen",
  "statusNOTINa",
  "^status=open",
  "^^status=open",
  "status=open^",
  "ORDERBYa^^b=1",
  "a=1^OR",
  "a=1^OR^b=2",
  "a=1^NQ",
  "a=1^NQ^b=2",
  "a=1^NQ^EQ",
  "priority>high",
  "priority=1.5",
  "priority=99999999999999999999",
  "priorityIN1,x",
  "priorityBETWEEN1@x",
  "flag=yes",
  "flag=TRUE",
  "created>yesterday",
  "created>javascript:alert(1)",
  "priorityBETWEEN2",
  "priorityBETWEEN2@3@4",
  "nBETWEEN@3",
  "nBETWEEN3@",
  "statusISEMPTYx",
  "statusANYTHINGx",
  "statusIN",
  "statusNOT IN^a=1",
  "statusINa,,b",
  "=open",
  "a=1^!=open",
  "Status=open",
  "1abc=x",
  "a..b=x",
  "statusSAMEAS",
  "statusSAMEASPrev",
  "ORDERBY",
  "ORDERBYDESC",
  "ORDERBYa b",
  "ORDERBYa^ORb=1",
  "a=1^ORORDERBYb",
  "a=1^EQ^b=2",
  "^EQ",
  "' OR 1=1 --",
  `a=${"x".repeat(9000)}`,
];
for (const f of BAD_FILTERS) {
  const label = JSON.stringify(f.slice(0, 30));
  add("search_get", `filter ${label}`, 400, (t) => OPS.search_get(t, { query: { metadata: f } }));
  add("search_post", `filter ${label}`, 400, (t) => OPS.search_post(t, json({ collection_names: [t.collection], metadata: f })));
  add("tag_get", `filter ${label}`, 400, (t) => OPS.tag_get(t, { query: { tag_info: f } }));
  add("tag_post", `filter ${label}`, 400, (t) => OPS.tag_post(t, json({ tag_info: f })));
}
add("search_post", "a filter with a lone surrogate", 400, (t) =>
  OPS.search_post(t, { body: '{"metadata":"a=x\\ud800"}', contentType: JSON_TYPE }),
);

// Query strings: bytes that are not UTF-8, on every operation that reads parameters.
for (const op of ALL_OPS.filter((o) => o !== "list_collections")) {
  const param = op.startsWith("search") ? "query" : op === "status" || op === "delete_document" ? "id_value" : "collection_name";
  add(op, `${param} percent-encoding bytes that are not UTF-8`, 400, (t) => {
    const [path, rest] = pathOf(op);
    const body =
      op === "load_document"
        ? { body: form([["file", textFile()]]) }
        : methodOf(op) === "POST" && op !== "doctor"
          ? json(op === "load_text" ? { text: "x" } : op === "load_texts" ? { documents: [{ text: "x" }] } : {})
          : {};
    return http(t, methodOf(op), `${path}?${rest}${param}=%FF%FEa%C3%28`, body);
  });
}
function methodOf(op: Op): string {
  return op.startsWith("delete") ? "DELETE" : op.startsWith("load") || op.endsWith("post") || op === "doctor" ? "POST" : "GET";
}
function pathOf(op: Op): [string, string] {
  const table: Record<Op, [string, string]> = {
    load_document: ["/load_document_to_collection", ""],
    load_text: ["/load_text_to_collection", ""],
    load_texts: ["/load_texts_to_collection", ""],
    search_get: ["/get_relevant_documents", ""],
    search_post: ["/get_relevant_documents", ""],
    tag_get: ["/get_content_by_tag", "collection_name=x&"],
    tag_post: ["/get_content_by_tag", "collection_name=x&"],
    list_documents: ["/get_list_of_documents_names", ""],
    list_collections: ["/get_list_of_collection", ""],
    status: ["/get_document_status", "collection_name=x&"],
    delete_document: ["/delete_document_from_collection", "collection_name=x&"],
    delete_collection: ["/delete_collection", ""],
    doctor: ["/doctor", ""],
  };
  return table[op];
}

// No token, or a malformed one, on every operation.
for (const op of ALL_OPS) {
  add(op, "no token", 401, (t) => OPS[op](t, { token: null }));
  add(op, "a wrong token", 401, (t) => OPS[op](t, { token: "not-a-token-of-this-service" }));
}
for (const header of ["Bearer", "Basic dXNlcjpwYXNz", "Bearer a b c", "bearer", `Bearer ${"x".repeat(8000)}`]) {
  add("list_collections", `Authorization: ${header.slice(0, 20)}`, 401, (t) =>
    OPS.list_collections(t, { token: null, headers: { authorization: header } }),
  );
}

// Paths that try to climb out or to smuggle a separator.
for (const path of [
  "/load_text_to_collection/..%2F..%2Fetc%2Fpasswd",
  "/%2e%2e/%2e%2e/etc/passwd",
  "/..;/get_list_of_collection",
  "/get_list_of_collection%00",
  "/get_list_of_collection%2F..",
  "/blobs/../catalog.sqlite",
]) {
  add("paths", path, 404, (t) => http(t, "GET", path));
}

// Uploads: forms missing, duplicated, truncated, not forms at all, too many, too large, of the wrong type.
const B = "XBOUNDARYX";
const MULTIPART = `multipart/form-data; boundary=${B}`;
const part = (name: string, value: string, filename?: string) =>
  `--${B}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"\r\nContent-Type: text/plain` : ""}\r\n\r\n${value}\r\n`;
const upload = (t: Target, p: Parts) => OPS.load_document(t, p);
const raw = (body: string | Buffer, contentType = MULTIPART) => ({ body, contentType });
const UPLOADS: [string, number, (t: Target) => Parts][] = [
  ["no file part", 400, () => ({ body: form([["metadata", "{}"]]) })],
  ["an empty form", 400, () => raw(`--${B}--\r\n`)],
  ["the file in another part", 400, () => ({ body: form([["document", textFile()]]) })],
  ["a file in the metadata part", 400, () => ({ body: form([["metadata", textFile("{}")]]) })],
  [
    "two files",
    400,
    () => ({
      body: form([
        ["file", textFile()],
        ["file", textFile()],
      ]),
    }),
  ],
  [
    "two metadata fields",
    400,
    () => ({
      body: form([
        ["file", textFile()],
        ["metadata", "{}"],
        ["metadata", "{}"],
      ]),
    }),
  ],
  [
    "an unknown field",
    400,
    () => ({
      body: form([
        ["file", textFile()],
        ["meta_data", "{}"],
      ]),
    }),
  ],
  [
    "metadata that is not JSON",
    400,
    () => ({
      body: form([
        ["file", textFile()],
        ["metadata", "{status: open}"],
      ]),
    }),
  ],
  [
    "metadata an array",
    400,
    () => ({
      body: form([
        ["file", textFile()],
        ["metadata", "[1,2]"],
      ]),
    }),
  ],
  [
    "metadata a string",
    400,
    () => ({
      body: form([
        ["file", textFile()],
        ["metadata", '"open"'],
      ]),
    }),
  ],
  [
    "metadata null",
    400,
    () => ({
      body: form([
        ["file", textFile()],
        ["metadata", "null"],
      ]),
    }),
  ],
  [
    "metadata 100,000 levels deep",
    400,
    () => ({
      body: form([
        ["file", textFile()],
        ["metadata", deepObjects(100_000)],
      ]),
    }),
  ],
  [
    "metadata with a bad key",
    400,
    () => ({
      body: form([
        ["file", textFile()],
        ["metadata", '{"A B":1}'],
      ]),
    }),
  ],
  [
    "metadata over its limit",
    400,
    () => ({
      body: form([
        ["file", textFile()],
        ["metadata", JSON.stringify({ a: "x".repeat(70_000) })],
      ]),
    }),
  ],
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
  [
    "a metadata field of 2 MB",
    413,
    () => ({
      body: form([
        ["file", textFile()],
        ["metadata", "x".repeat(2 * 1024 * 1024)],
      ]),
    }),
  ],
  ["a JSON body", 415, () => json({ text: "hello" })],
  ["a text/plain body", 415, () => raw("hello", "text/plain")],
  ["a form-urlencoded body", 415, () => raw("file=hello", "application/x-www-form-urlencoded")],
  ["an octet-stream body", 415, () => raw(Buffer.from("hello"), "application/octet-stream")],
  [
    "a PNG file",
    415,
    () => ({ body: form([["file", new Blob([Buffer.from("89504e470d0a1a0a0000000d49484452", "hex")], { type: "image/png" })]]) }),
  ],
  [
    "an ELF executable",
    415,
    () => ({ body: form([["file", new Blob([Buffer.concat([Buffer.from("7f454c46020101", "hex"), Buffer.alloc(64)])])]]) }),
  ],
  [
    "a ZIP that is not a document",
    415,
    () => ({ body: form([["file", new Blob([Buffer.concat([Buffer.from("504b0304", "hex"), Buffer.alloc(60)])])]]) }),
  ],
  [
    "random binary bytes",
    415,
    () => ({ body: form([["file", new Blob([Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 2654435761) % 251))])]]) }),
  ],
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

// Below fetch: malformed HTTP, header floods, endless and slow bodies, over a bare socket.
function socket(t: Target, request: string | Buffer, options?: Parameters<typeof rawRequest>[2]): Promise<Answer> {
  return rawRequest(t.url, request, options).then((r) => ({
    status: r.status,
    contentType: r.headers["content-type"],
    body: r.body,
    closed: r.closed,
  }));
}
const auth = (t: Target) => ({ authorization: `Bearer ${t.token}` });
const manyHeaders = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, "1"]));
add("http", "101 header fields", 431, (t) =>
  socket(t, head("GET", "/get_list_of_collection", { ...auth(t), ...manyHeaders(100), connection: "close" })),
);
add("http", "1,000 header fields", 431, (t) =>
  socket(t, head("GET", "/get_list_of_collection", { ...auth(t), ...manyHeaders(1000), connection: "close" })),
);
add("http", "5,000 header fields", 431, (t) =>
  socket(t, head("GET", "/get_list_of_collection", { ...auth(t), ...manyHeaders(5000), connection: "close" })),
);
add("http", "a header value of 20 KB", 431, (t) =>
  socket(t, head("GET", "/get_list_of_collection", { ...auth(t), "x-big": "v".repeat(20_000) })),
);
add("http", "a header value of 1 MB", 431, (t) =>
  socket(t, head("GET", "/get_list_of_collection", { ...auth(t), "x-big": "v".repeat(1024 * 1024) })),
);
add("http", "a request target of 20 KB", 431, (t) =>
  socket(t, head("GET", `/get_relevant_documents?query=${"q".repeat(20_000)}`, auth(t))),
);
add("http", "a NUL in a header value", 400, (t) => socket(t, head("GET", "/get_list_of_collection", { ...auth(t), "x-a": "a\u0000b" })));
add("http", "a space in a header name", 400, (t) => socket(t, head("GET", "/get_list_of_collection", { ...auth(t), "x a": "b" })));
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
add("http", "Content-Length not a number", 400, (t) =>
  socket(t, head("POST", `/load_text_to_collection?collection_name=${t.collection}`, { ...auth(t), "content-length": "abc" }) + "{}"),
);
add("http", "two different Content-Lengths", 400, (t) =>
  socket(
    t,
    head("POST", `/load_text_to_collection?collection_name=${t.collection}`, { ...auth(t), "content-length": "2\r\nContent-Length: 3" }) +
      "{}",
  ),
);
add("http", "Content-Length with Transfer-Encoding", 400, (t) =>
  socket(
    t,
    head("POST", `/load_text_to_collection?collection_name=${t.collection}`, {
      ...auth(t),
      "content-length": 5,
      "transfer-encoding": "chunked",
    }) + "0\r\n\r\n",
  ),
);
add("http", "a malformed chunk size", 400, (t) =>
  socket(
    t,
    head("POST", `/load_text_to_collection?collection_name=${t.collection}`, {
      ...auth(t),
      "content-type": JSON_TYPE,
      "transfer-encoding": "chunked",
    }) + "zz\r\n{}\r\n0\r\n\r\n",
  ),
);
add("http", "an unknown Transfer-Encoding", 400, (t) =>
  socket(
    t,
    head("POST", `/load_text_to_collection?collection_name=${t.collection}`, { ...auth(t), "transfer-encoding": "gzip, rot13" }) + "{}",
  ),
);
add(
  "http",
  "a Content-Length far past MAX_BODY_BYTES",
  413,
  (t) =>
    socket(
      t,
      head("POST", `/load_text_to_collection?collection_name=${t.collection}`, {
        ...auth(t),
        "content-type": JSON_TYPE,
        "content-length": 10 ** 12,
      }) + '{"text":"',
    ),
  true,
);
add(
  "http",
  "a Content-Length far past MAX_UPLOAD_BYTES",
  413,
  (t) =>
    socket(
      t,
      head("POST", `/load_document_to_collection?collection_name=${t.collection}`, {
        ...auth(t),
        "content-type": MULTIPART,
        "content-length": 10 ** 12,
      }) + part("file", "x", "a.txt"),
    ),
  true,
);
add(
  "http",
  "a JSON body that never ends",
  413,
  (t) => {
    const block = chunk("x".repeat(64 * 1024));
    return socket(
      t,
      head("POST", `/load_text_to_collection?collection_name=${t.collection}`, {
        ...auth(t),
        "content-type": JSON_TYPE,
        "transfer-encoding": "chunked",
      }) + '6\r\n{"text\r\n',
      { stream: () => block },
    );
  },
  true,
);
add(
  "http",
  "a file part that never ends",
  413,
  (t) => {
    const block = chunk("x".repeat(64 * 1024));
    const start = chunk(
      part("metadata", "{}") +
        `--${B}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n`,
    );
    return socket(
      t,
      Buffer.concat([
        Buffer.from(
          head("POST", `/load_document_to_collection?collection_name=${t.collection}`, {
            ...auth(t),
            "content-type": MULTIPART,
            "transfer-encoding": "chunked",
          }),
        ),
        start,
      ]),
      { stream: () => block },
    );
  },
  true,
);
add(
  "http",
  "a text field that never ends",
  413,
  (t) => {
    const block = chunk("x".repeat(64 * 1024));
    const start = chunk(`--${B}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n`);
    return socket(
      t,
      Buffer.concat([
        Buffer.from(
          head("POST", `/load_document_to_collection?collection_name=${t.collection}`, {
            ...auth(t),
            "content-type": MULTIPART,
            "transfer-encoding": "chunked",
          }),
        ),
        start,
      ]),
      { stream: () => block },
    );
  },
  true,
);
const drip = (text: string) => [...text].map((c) => c);
add("http", "a connection that sends nothing", 408, (t) => socket(t, ""), true);
add(
  "http",
  "headers a byte per second",
  408,
  (t) => socket(t, "G", { drip: drip(`ET /get_list_of_collection HTTP/1.1\r\nHost: x\r\n${"X-Slow: 1\r\n".repeat(20)}\r\n`) }),
  true,
);
add(
  "http",
  "a JSON body a byte per second",
  408,
  (t) =>
    socket(
      t,
      head("POST", `/load_text_to_collection?collection_name=${t.collection}`, {
        ...auth(t),
        "content-type": JSON_TYPE,
        "content-length": 200,
      }),
      { drip: drip(`{"text":"${"s".repeat(180)}"}`) },
    ),
  true,
);
add(
  "http",
  "a form a byte per second",
  408,
  (t) =>
    socket(
      t,
      head("POST", `/load_document_to_collection?collection_name=${t.collection}`, {
        ...auth(t),
        "content-type": MULTIPART,
        "content-length": 300,
      }),
      { drip: drip(part("file", "s".repeat(200), "a.txt")) },
    ),
  true,
);
add(
  "http",
  "a body shorter than its Content-Length",
  408,
  (t) =>
    socket(
      t,
      head("POST", `/load_text_to_collection?collection_name=${t.collection}`, {
        ...auth(t),
        "content-type": JSON_TYPE,
        "content-length": 100,
      }) + '{"text":"x"}',
    ),
  true,
);

export const CASES: readonly Case[] = cases;
