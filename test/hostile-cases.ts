/**
 * The table of malformed requests that test/hostile.test.ts sends: every operation, with
 * broken or hostile names, ids, bodies, types, filters, headers and paths here; forms in
 * hostile-uploads.ts, malformed HTTP and slow clients in hostile-sockets.ts. Each case names
 * the 4xx it must get; the test checks that it comes with problem details.
 */
import {
  ALL_OPS,
  caseList,
  deepArrays,
  deepObjects,
  form,
  http,
  JSON_TYPE,
  json,
  OPS,
  ROUTES,
  textFile,
  type Case,
  type Op,
} from "./hostile-requests.ts";
import { UPLOAD_CASES } from "./hostile-uploads.ts";
import { SOCKET_CASES } from "./hostile-sockets.ts";

export type { Answer, Target } from "./hostile-requests.ts";

const { cases, add } = caseList();

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

// Query strings: bytes that are not UTF-8, on every operation that reads parameters; these
// operations get a collection_name=x before the broken parameter as well.
const NAMED: Op[] = ["tag_get", "tag_post", "status", "delete_document"];
for (const op of ALL_OPS.filter((o) => o !== "list_collections")) {
  const param = op.startsWith("search") ? "query" : op === "status" || op === "delete_document" ? "id_value" : "collection_name";
  add(op, `${param} percent-encoding bytes that are not UTF-8`, 400, (t) => {
    const [method, path] = ROUTES[op];
    const rest = NAMED.includes(op) ? "collection_name=x&" : "";
    const body =
      op === "load_document"
        ? { body: form([["file", textFile()]]) }
        : method === "POST" && op !== "doctor"
          ? json(op === "load_text" ? { text: "x" } : op === "load_texts" ? { documents: [{ text: "x" }] } : {})
          : {};
    return http(t, method, `${path}?${rest}${param}=%FF%FEa%C3%28`, body);
  });
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

export const CASES: readonly Case[] = [...cases, ...UPLOAD_CASES, ...SOCKET_CASES];
