/**
 * Requests as clients really send them: JSON without its Content-Type (curl -d, Python's
 * urllib), misspelt or misplaced keys, wrong types, wrong methods, broken forms. Each is read
 * as meant or refused with a message naming the parameter, what was received, what is
 * accepted and the setting behind a limit; none is quietly misread.
 */
import { describe, expect, it } from "vitest";
import { serviceAround, uniqueName, type Reply, type Service } from "./harness.ts";

let svc: Service;

// Small limits, so that the messages can be seen to name the configured values.
const MAX_K = 50;
const MAX_UPLOAD_BYTES = 2000;
const MAX_BODY_BYTES = 4096;

serviceAround(
  { env: { MAX_K: String(MAX_K), MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES), MAX_BODY_BYTES: String(MAX_BODY_BYTES) } },
  (started) => (svc = started),
);

function expectProblem(r: Reply, status: number, detail: RegExp) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(r.body).toMatchObject({ type: "about:blank", status });
  expect(r.body.detail).toMatch(detail);
}

async function load(collection: string, text: string, metadata: object = {}) {
  const r = await svc.request("POST", "/load_text_to_collection", {
    query: { collection_name: collection, wait: "true" },
    json: { text, metadata },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

const URLENCODED = "application/x-www-form-urlencoded";

describe("a JSON body without Content-Type: application/json", () => {
  it("is read when it holds JSON, as curl -d and urllib send it", async () => {
    const c = uniqueName();
    const loaded = await svc.request("POST", "/load_text_to_collection", {
      query: { collection_name: c, wait: "true" },
      body: JSON.stringify({ text: "curl sent this about lighthouses", metadata: { status: "open" } }),
      contentType: URLENCODED,
    });
    expect(loaded.status, JSON.stringify(loaded.body)).toBe(200);
    await load(c, "another text about lighthouses", { status: "closed" });

    const search = await svc.request("POST", "/get_relevant_documents", {
      query: { query: "lighthouses" },
      body: JSON.stringify({ collection_names: [c], metadata: "status=closed" }),
      contentType: URLENCODED,
    });
    expect(search.status).toBe(200);
    expect(search.body.results.map((h: any) => h.metadata.status)).toEqual(["closed"]);

    const tag = await svc.request("POST", "/get_content_by_tag", {
      query: { collection_name: c },
      body: JSON.stringify({ tag_info: "status=open" }),
    });
    expect(tag.body.documents.map((d: any) => d.text)).toEqual(["curl sent this about lighthouses"]);

    // A GET with a body and no type (what some clients send) is read too.
    const get = await svc.request("GET", "/get_content_by_tag", {
      query: { collection_name: c },
      body: JSON.stringify({ tag_info: "status=closed" }),
      contentType: "",
    });
    expect(get.body.documents.map((d: any) => d.text)).toEqual(["another text about lighthouses"]);
  });

  it("is refused with 415 naming the type to send when it is not JSON", async () => {
    const r = await svc.request("POST", "/load_text_to_collection", {
      query: { collection_name: uniqueName() },
      body: "text=hello&metadata=x",
      contentType: URLENCODED,
    });
    expectProblem(
      r,
      415,
      /^body: received Content-Type application\/x-www-form-urlencoded and 21 bytes that are not JSON; accepted: a JSON object sent with Content-Type: application\/json$/,
    );
    const search = await svc.request("POST", "/get_relevant_documents", {
      query: { query: "x" },
      body: "collection_names=a",
      contentType: URLENCODED,
    });
    expectProblem(search, 415, /Content-Type: application\/json/);
    const form = new FormData();
    form.append("text", "hello");
    expectProblem(
      await svc.request("POST", "/load_text_to_collection", { query: { collection_name: uniqueName() }, form }),
      415,
      /^body: received multipart\/form-data; accepted: a JSON object sent with Content-Type: application\/json \(only \/load_document_to_collection takes a form\)$/,
    );
  });

  it("is a 400 when declared JSON but malformed, or not an object", async () => {
    expectProblem(
      await svc.request("POST", "/load_text_to_collection", {
        query: { collection_name: uniqueName() },
        body: '{"text": ',
        contentType: "application/json",
      }),
      400,
      /^body: received 9 bytes declared application\/json that are not valid JSON \(.+\); accepted: one JSON object$/,
    );
    expectProblem(
      await svc.request("POST", "/get_relevant_documents", { query: { query: "x" }, json: ["a", "b"] }),
      400,
      /^body: received a JSON array; accepted: a JSON object with the fields query, k, collection_names, metadata$/,
    );
    expectProblem(
      await svc.request("POST", "/load_text_to_collection", { query: { collection_name: uniqueName() }, json: "just text" }),
      400,
      /^body: received the JSON value "just text"; accepted: a JSON object with the fields text, metadata$/,
    );
  });
});

describe("unknown keys", () => {
  it("are a 400 naming the key and the one meant", async () => {
    const search = (query: Record<string, string | string[]>, json?: unknown) =>
      svc.request(json ? "POST" : "GET", "/get_relevant_documents", { query: { query: "x", ...query }, json });
    expectProblem(
      await search({ collection_name: "a" }),
      400,
      /^collection_name: unknown query parameter \(did you mean 'collection_names'\?\); accepted query parameters: query, k, collection_names, metadata$/,
    );
    expectProblem(
      await search({ "collection_names[]": ["a", "b"] }),
      400,
      /^collection_names\[\]: unknown query parameter \(did you mean 'collection_names'\?\); repeat it as collection_names=a&collection_names=b, or separate the names with commas/,
    );
    expectProblem(
      await search({}, { collection_names: ["a"], filter: "status=open" }),
      400,
      /^filter: unknown field \(did you mean 'metadata'\?\); accepted fields: query, k, collection_names, metadata$/,
    );
    expectProblem(await search({}, { collection_name: "a" }), 400, /^collection_name: unknown field \(did you mean 'collection_names'\?\)/);
    expectProblem(
      await svc.request("POST", "/get_content_by_tag", { query: { collection_name: "a" }, json: { filter: "status=open" } }),
      400,
      /^filter: unknown field \(did you mean 'tag_info'\?\)/,
    );
    expectProblem(
      await svc.request("POST", "/load_text_to_collection", {
        query: { collection_name: uniqueName() },
        json: { text: "x", metdata: { status: "open" } },
      }),
      400,
      /^metdata: unknown field \(did you mean 'metadata'\?\); accepted fields: text, metadata$/,
    );
    expectProblem(
      await svc.request("POST", "/load_texts_to_collection", {
        query: { collection_name: uniqueName() },
        json: { documents: [{ text: "x", metdata: {} }] },
      }),
      400,
      /^documents\.0: metdata: unknown field \(did you mean 'metadata'\?\); accepted fields: text, metadata, doc_id$/,
    );
    expectProblem(
      await svc.request("GET", "/get_list_of_collection", { query: { verbose: "1" } }),
      400,
      /^verbose: unknown query parameter; this operation takes no query parameters$/,
    );
  });

  it("in the wrong place say where they go", async () => {
    expectProblem(
      await svc.request("POST", "/load_text_to_collection", { query: { collection_name: uniqueName(), text: "x" }, json: {} }),
      400,
      /^text: not read as a query parameter here; send it as a field of the JSON body/,
    );
    expectProblem(
      await svc.request("POST", "/load_text_to_collection", { query: {}, json: { collection_name: "a", text: "x" } }),
      400,
      /^collection_name: not read as a field here; send it as a query parameter/,
    );
    expectProblem(
      await svc.request("DELETE", "/delete_collection", { query: { collection_name: "a" }, json: { collection_name: "a" } }),
      400,
      /^collection_name: not read as a field here; send it as a query parameter; this operation takes no fields$/,
    );
  });

  it("an explicitly empty collection_names is a 400, not every collection", async () => {
    const empty =
      /^collection_names: expected at least one collection name; to search every collection, leave collection_names out; received /;
    expectProblem(
      await svc.request("POST", "/get_relevant_documents", { query: { query: "x" }, json: { collection_names: [] } }),
      400,
      empty,
    );
    expectProblem(await svc.request("GET", "/get_relevant_documents", { query: { query: "x", collection_names: "" } }), 400, empty);
    expectProblem(await svc.request("GET", "/get_relevant_documents", { query: { query: "x", collection_names: " , " } }), 400, empty);
  });
});

describe("messages", () => {
  it("k says what was received and what is accepted, with MAX_K", async () => {
    const k = (value: string) => svc.request("GET", "/get_relevant_documents", { query: { query: "x", k: value } });
    const accepted = `k: expected an integer from 1 to ${MAX_K} \\(the server's MAX_K\\)`;
    expectProblem(await k("abc"), 400, new RegExp(`^${accepted}; received "abc"$`));
    expectProblem(await k("1.5"), 400, new RegExp(`^${accepted}; received "1.5"$`));
    expectProblem(await k("0"), 400, new RegExp(`^${accepted}; received "0"$`));
    expectProblem(await k(String(MAX_K + 1)), 400, new RegExp(`^${accepted}; received "${MAX_K + 1}"$`));
    const huge = await k("99999999999999999999999");
    expectProblem(huge, 400, new RegExp(`^${accepted}; received "99999999999999999999999"$`));
    expect(huge.body.detail).not.toContain("9007199254740991");
    expectProblem(
      await svc.request("POST", "/get_relevant_documents", { query: { query: "x" }, json: { k: "many" } }),
      400,
      new RegExp(`^${accepted}; received "many"$`),
    );
    expect((await k(String(MAX_K))).status).toBe(200);
  });

  it("other parameters name what was received and accepted", async () => {
    const c = uniqueName();
    await load(c, "one document");
    expectProblem(
      await svc.request("GET", "/get_relevant_documents", { query: {} }),
      400,
      /^query: is required; expected the search text, 1 to 4096 characters$/,
    );
    expectProblem(
      await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: "../etc" } }),
      400,
      /^collection_name: expected a collection name: 1 to 64 letters, digits, '_' or '-', starting with a letter or digit; received "..\/etc"$/,
    );
    expectProblem(
      await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: c, limit: "0" } }),
      400,
      /^limit: expected an integer from 1 to 1000; received "0"$/,
    );
    expectProblem(
      await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: c, cursor: "garbage" } }),
      400,
      /^cursor: received "garbage", which is not a cursor this service returned; send the next_cursor of the previous page as it was given$/,
    );
    expectProblem(
      await svc.request("POST", "/load_text_to_collection", { query: { collection_name: "a", wait: "yes" }, json: { text: "x" } }),
      400,
      /^wait: expected true or false \(or 1 or 0\); received "yes"$/,
    );
    expectProblem(
      await svc.request("POST", "/load_text_to_collection", { query: { collection_name: "a" }, json: { text: "" } }),
      400,
      /^text: expected the document's text, a non-empty string; received ""$/,
    );
  });

  it("metadata sent as a JSON string is accepted when it holds an object", async () => {
    const c = uniqueName();
    const r = await svc.request("POST", "/load_text_to_collection", {
      query: { collection_name: c, wait: "true" },
      json: { text: "stringified metadata", metadata: JSON.stringify({ status: "open", priority: 3 }) },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const status = await svc.request("GET", "/get_document_status", { query: { collection_name: c, id_value: r.body.doc_id } });
    expect(status.body.metadata).toEqual({ status: "open", priority: 3 });
    const bad = (metadata: unknown) =>
      svc.request("POST", "/load_text_to_collection", { query: { collection_name: c }, json: { text: "x", metadata } });
    const accepted = "metadata: expected a JSON object of metadata, or a string holding one \\(see the metadata rules in the README\\)";
    expectProblem(await bad("{status"), 400, new RegExp(`^${accepted}; the string is not valid JSON \\(.+\\); received "\\{status"$`));
    expectProblem(await bad("[1, 2]"), 400, new RegExp(`^${accepted}; the string holds an array; received "\\[1, 2\\]"$`));
    expectProblem(await bad(42), 400, new RegExp(`^${accepted}; received 42$`));
    expectProblem(await bad(JSON.stringify({ priority: "high" })), 400, /^metadata\.priority: expected an integer; received "high"$/);
  });

  it("a filter sent as an object or a list says how to write it", async () => {
    const filter = (metadata: unknown) => svc.request("POST", "/get_relevant_documents", { query: { query: "x" }, json: { metadata } });
    const accepted = "metadata: expected a filter string in encoded-query syntax, e.g. status=open\\^priority=2 \\(see /docs/filters\\)";
    expectProblem(
      await filter({ status: "open", priority: 2 }),
      400,
      new RegExp(
        `^${accepted}, not a JSON object; this object written as a filter is status=open\\^priority=2; received \\{"status":"open","priority":2\\}$`,
      ),
    );
    expectProblem(
      await filter(["status=open"]),
      400,
      new RegExp(`^${accepted}, not a list: join conditions with \\^ \\(AND\\) or \\^OR; received \\["status=open"\\]$`),
    );
    expectProblem(
      await svc.request("POST", "/get_content_by_tag", { query: { collection_name: "a" }, json: { tag_info: { type: "memo" } } }),
      400,
      /^tag_info: expected a filter string .* this object written as a filter is type=memo; received/,
    );
  });

  it("a wrong method is a 405 with Allow", async () => {
    for (const [method, path, allow] of [
      ["DELETE", "/get_relevant_documents", "GET, HEAD, POST"],
      ["PUT", "/load_text_to_collection", "POST"],
      ["GET", "/delete_collection", "DELETE"],
      ["POST", "/get_list_of_documents_names", "GET, HEAD"],
    ] as const) {
      const r = await svc.request(method, path, { query: { collection_name: "a" } });
      expectProblem(r, 405, new RegExp(`^method ${method} is not served at ${path}; accepted: ${allow}$`));
      expect(r.body.title).toBe("Method Not Allowed");
      expect(r.headers.get("allow")).toBe(allow);
    }
    expectProblem(await svc.request("GET", "/no_such_operation"), 404, /no operation GET \/no_such_operation/);
  });
});

describe("uploads", () => {
  const upload = (form: FormData, query: Record<string, string> = {}) =>
    svc.request("POST", "/load_document_to_collection", { query: { collection_name: uniqueName(), ...query }, form });
  const raw = (body: string, contentType: string) =>
    svc.request("POST", "/load_document_to_collection", { query: { collection_name: uniqueName() }, body, contentType });
  const file = (text = "hello") => new Blob([text], { type: "text/plain" });
  const accepted = "accepted: multipart/form-data with the file in the part 'file' and the text field 'metadata'";

  it("a file in a part with another name is a 400 naming the expected one", async () => {
    const form = new FormData();
    form.append("document", file(), "a.txt");
    expectProblem(
      await upload(form),
      400,
      new RegExp(
        `^body: received a file in the part 'document'; accepted: the file in the part 'file' \\(${accepted.replace("accepted: ", "")}\\)$`,
      ),
    );
    const inMetadata = new FormData();
    inMetadata.append("metadata", file("{}"), "m.json");
    expectProblem(
      await upload(inMetadata),
      400,
      /^body: received a file in the part 'metadata' \('metadata' is a text field\); accepted: the file in the part 'file'/,
    );
    const none = new FormData();
    none.append("metadata", "{}");
    expectProblem(
      await upload(none),
      400,
      /^file: is required; received no file; accepted: multipart\/form-data with the file in the part 'file'$/,
    );
  });

  it("broken or unexpected forms are a 400, never a 500", async () => {
    const two = new FormData();
    two.append("file", file(), "a.txt");
    two.append("file", file(), "b.txt");
    expectProblem(await upload(two), 400, /^file: received more than one file; accepted: one file per request, in the part 'file'$/);
    const extra = new FormData();
    extra.append("file", file(), "a.txt");
    extra.append("meta_data", "{}");
    expectProblem(
      await upload(extra),
      400,
      /^meta_data: unknown form field \(did you mean 'metadata'\?\); accepted form fields: metadata$/,
    );
    const malformed = new RegExp(`^body: malformed multipart/form-data \\(.+\\); ${accepted}$`);
    expectProblem(
      await raw('--x\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello', "multipart/form-data; boundary=x"),
      400,
      malformed,
    );
    expectProblem(await raw("--x\r\nnot a header\r\n\r\nhello\r\n--x--\r\n", "multipart/form-data; boundary=x"), 400, malformed);
    expectProblem(
      await raw("anything", "multipart/form-data"),
      400,
      /^body: malformed multipart\/form-data \(Multipart: Boundary not found\)/,
    );
    expectProblem(
      await raw("", "multipart/form-data; boundary=x"),
      400,
      /^body: malformed multipart\/form-data \(Unexpected end of form\)/,
    );
    const parts =
      Array.from({ length: 20 }, (_, i) => `--x\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`).join("") + "--x--\r\n";
    expectProblem(await raw(parts, "multipart/form-data; boundary=x"), 400, /^body: received more than (8 text fields|16 parts)/);
  });

  it("a body that is not a form is a 415 listing what to send", async () => {
    expectProblem(
      await raw(JSON.stringify({ text: "x" }), "application/json"),
      415,
      new RegExp(`^body: received Content-Type application/json; ${accepted} \\(for a text in JSON, use /load_text_to_collection\\)$`),
    );
  });

  it("a file of a type we cannot read is a 415 listing the accepted types", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    const form = new FormData();
    form.append("file", new Blob([png], { type: "image/png" }), "pic.png");
    const r = await upload(form);
    expectProblem(
      r,
      415,
      /^file: unsupported file type image\/png; accepted: text\/plain, text\/markdown, .*application\/pdf, .*application\/vnd\.openxmlformats-officedocument\.wordprocessingml\.document/,
    );
    expect(r.body.media_type).toBe("image/png");
  });

  it("too large is a 413 naming the setting", async () => {
    const form = new FormData();
    form.append("file", file("x".repeat(MAX_UPLOAD_BYTES + 1)), "big.txt");
    const r = await upload(form);
    expectProblem(
      r,
      413,
      new RegExp(
        `^file: received a file larger than ${MAX_UPLOAD_BYTES} bytes \\(a request of \\d+ bytes\\); accepted: at most ${MAX_UPLOAD_BYTES} bytes \\(the server's MAX_UPLOAD_BYTES\\)$`,
      ),
    );
    expect(r.body.title).toBe("Content Too Large");
    const text = await svc.request("POST", "/load_text_to_collection", {
      query: { collection_name: uniqueName() },
      json: { text: "y".repeat(MAX_BODY_BYTES) },
    });
    expectProblem(
      text,
      413,
      new RegExp(
        `^body: received ${MAX_BODY_BYTES + 11} bytes; accepted: a body of at most ${MAX_BODY_BYTES} bytes \\(the server's MAX_BODY_BYTES;`,
      ),
    );
  });
});
