import { mkdtempSync, rmSync } from "node:fs";
import { STATUS_CODES, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, createServices, loadConfig, parseFilter, parseMetadata, type ApiServices } from "@docstore/shared";
import { startEmbeddedWorker, type EmbeddedWorker } from "@docstore/worker";
import { createApp } from "./app.ts";
import { createAuthenticator } from "./auth.ts";
import { createServer } from "./server.ts";

type Json = Record<string, any>;
const ADMIN = "openapi-test-admin-0123456789";
const READER = "openapi-test-reader-0123456789";
const MAX_K = 50;

// The standard phrase of each status; RFC 9110 renamed 413, Node's table has the old name.
const TITLES: Record<number, string> = { ...STATUS_CODES, 413: "Content Too Large" } as Record<number, string>;

describe("the OpenAPI document and the reference pages", () => {
  let dataDir: string;
  let services: ApiServices;
  // The worker makes the 200 of `wait=true` reachable.
  let worker: EmbeddedWorker | undefined;
  let server: Server;
  let base: string;
  let doc: Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat("binary", true);
  let problem: ValidateFunction;
  // The same schema closed: a member the document does not list fails it.
  let problemClosed: ValidateFunction;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "docstore-openapi-"));
    const config = loadConfig({
      DATA_DIR: dataDir,
      API_TOKENS: `${ADMIN},${READER}:read`,
      LOG_LEVEL: "silent",
      MAX_K: String(MAX_K),
      MAX_UPLOAD_BYTES: "4096",
      MAX_BODY_BYTES: "4096",
    });
    const logger = createLogger("silent");
    services = createServices(config, logger, { role: "api", notify: () => worker?.wake() });
    worker = startEmbeddedWorker(config, logger, services.localCatalog!);
    const app = createApp({ config, logger, services, authenticate: createAuthenticator(config.auth.tokens ?? []) });
    server = createServer(config.http, logger);
    server.on("request", app);
    server.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    doc = (await (await fetch(`${base}/openapi.json`)).json()) as Json;
    problem = ajv.compile(doc.components.schemas.Problem);
    problemClosed = ajv.compile({ ...doc.components.schemas.Problem, additionalProperties: false });
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await worker?.stop();
    await services?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const operations = () =>
    Object.entries(doc.paths as Json).flatMap(([p, ops]) =>
      Object.entries(ops as Json).map(([method, op]) => ({ path: p, method, op: op as Json })),
    );

  it("is a valid OpenAPI 3.1 document", async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers).toEqual([expect.objectContaining({ url: "/" })]);
  });

  it("names every operation uniquely and files it under a tag", () => {
    const ids = operations().map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain("get_relevant_documents");
    expect(ids).toContain("get_relevant_documents_post");
    const tags = new Set((doc.tags as { name: string }[]).map((t) => t.name));
    for (const { path: p, method, op } of operations())
      expect(
        op.tags?.every((t: string) => tags.has(t)),
        `${method} ${p}`,
      ).toBe(true);
  });

  it("shows an integer parameter read from a string as an integer, and only that", () => {
    const k = (op: Json) => op.parameters.find((p: Json) => p.name === "k");
    for (const method of ["get", "post"]) {
      expect(k(doc.paths["/get_relevant_documents"][method]).schema).toEqual({ type: "integer", minimum: 1, maximum: MAX_K, default: 4 });
    }
    // No schema anywhere both states a type and lists alternatives: a reader would see both.
    const both: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (node === null || typeof node !== "object") return;
      if (!Array.isArray(node) && "type" in node && "anyOf" in node) both.push(where);
      for (const [key, value] of Object.entries(node)) walk(value, `${where}/${key}`);
    };
    walk(doc, "#");
    expect(both).toEqual([]);
  });

  it("pre-fills Try it out with the collection the README's first load makes, and no other", () => {
    const named = new Set<unknown>();
    for (const { op } of operations()) {
      for (const param of op.parameters ?? [])
        if (/^collection_names?$/.test(param.name) && param.example !== undefined) named.add(param.example);
      const body = op.requestBody?.content?.["application/json"]?.example;
      for (const name of body?.collection_names ?? []) named.add(name);
    }
    expect([...named]).toEqual(["kb"]);
    const status = doc.paths["/get_document_status"].get.parameters.find((p: Json) => p.name === "id_value");
    expect(status.example).toBe("a1b2c3"); // the doc_id of that first load (metadata.sys_id)
  });

  it("gives every example a schema it matches", () => {
    let checked = 0;
    const check = (schema: Json, value: unknown, where: string) => {
      const validate = schema.$ref === "#/components/schemas/Problem" ? problemClosed : ajv.compile(schema);
      expect(validate(value), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      checked++;
    };
    for (const { path: p, method, op } of operations()) {
      const where = `${method} ${p}`;
      for (const param of op.parameters ?? [])
        if (param.example !== undefined) check(param.schema, param.example, `${where} ${param.name}`);
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Json)) {
        if (media.example !== undefined) check(media.schema, media.example, `${where} ${type} body`);
        for (const [name, prop] of Object.entries((media.schema.properties ?? {}) as Json)) {
          for (const example of prop.examples ?? []) check(prop, example, `${where} ${name}`);
        }
      }
      for (const [status, response] of Object.entries(op.responses as Json)) {
        for (const media of Object.values((response.content ?? {}) as Json)) {
          if (media.example !== undefined) check(media.schema, media.example, `${where} ${status}`);
        }
      }
    }
    // Every operation with a body or a JSON answer beyond the probes has one.
    const undocumented = operations().filter(
      ({ op }) => op.security && !Object.values(op.responses as Json).some((r) => r.content?.["application/json"]?.example),
    );
    expect(undocumented.map((o) => `${o.method} ${o.path}`)).toEqual(["get /metrics"]);
    expect(checked).toBeGreaterThan(100);
  });

  it("describes metadata as the service checks it", () => {
    const body = doc.paths["/load_text_to_collection"].post.requestBody.content["application/json"].schema;
    const validate = ajv.compile(body.properties.metadata);
    const samples: unknown[] = [
      { status: "open", priority: 2, flag: true, tags: ["a", 1, true], created: "2024-05-01T10:00:00Z", note: "é" },
      { Status: "open" },
      { "a-b": 1 },
      { nested: { a: 1 } },
      { list: [[1]] },
      { none: null },
      { priority: 1.5 },
      { flag: "yes" },
      { created: "2024-05-01" },
      { long: "x".repeat(8193) },
      Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])),
    ];
    for (const metadata of samples) {
      let accepted = true;
      try {
        parseMetadata(metadata);
      } catch {
        accepted = false;
      }
      expect(validate(metadata), JSON.stringify(metadata).slice(0, 80)).toBe(accepted);
    }
  });

  it("states k's real bound (MAX_K) and default", () => {
    for (const method of ["get", "post"]) {
      const k = doc.paths["/get_relevant_documents"][method].parameters.find((p: Json) => p.name === "k");
      expect(k.schema).toMatchObject({ type: "integer", minimum: 1, maximum: MAX_K, default: 4 });
    }
  });

  it("documents the 200 of wait=true, and both answers of a load match their schemas", async () => {
    const op = doc.paths["/load_text_to_collection"].post;
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "202"]));
    const call = (wait: boolean) =>
      fetch(`${base}/load_text_to_collection?collection_name=openapi&wait=${wait}`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "the quick brown fox", metadata: { status: "open" } }),
      });
    for (const [wait, status] of [
      [true, 200],
      [false, 202],
    ] as const) {
      const res = await call(wait);
      expect(res.status).toBe(status);
      const validate = ajv.compile(op.responses[String(status)].content["application/json"].schema);
      const body = await res.json();
      expect(validate(body), ajv.errorsText(validate.errors)).toBe(true);
    }
  });

  describe("every error answers problem details that match the Problem schema", () => {
    const get = (route: string, init: RequestInit = {}) =>
      fetch(`${base}${route}`, { ...init, headers: { authorization: `Bearer ${ADMIN}`, ...init.headers } });
    const post = (route: string, body: string, type: string, token = ADMIN) =>
      fetch(`${base}${route}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": type }, body });
    const multipart = (boundary: string, parts: string) => `--${boundary}\r\n${parts}--${boundary}--\r\n`;
    const png = Buffer.from(
      "89504e470d0a1a0a0000000d49484452000000010000000108000000003a7e9b550000000a4944415478da63600000000200015e2df8a40000000049454e44ae426082",
      "hex",
    );
    const uploadFile = (content: string | Buffer, filename: string) => {
      const form = new FormData();
      form.append("file", new Blob([content]), filename);
      return fetch(`${base}/load_document_to_collection?collection_name=c`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN}` },
        body: form,
      });
    };

    const cases: [string, number, () => Promise<Response>, (body: Json) => void][] = [
      [
        "a malformed filter",
        400,
        () => post("/get_relevant_documents?query=x", JSON.stringify({ metadata: "status" }), "application/json"),
        (b) => expect(b.position).toBe(6),
      ],
      ["k not an integer", 400, () => get("/get_relevant_documents?query=x&k=abc"), () => {}],
      [
        "k over MAX_K",
        400,
        () => get(`/get_relevant_documents?query=x&k=${MAX_K + 1}`),
        (b) => expect(b.detail).toContain(`from 1 to ${MAX_K} (the server's MAX_K)`),
      ],
      [
        "an unknown query parameter",
        400,
        () => get("/get_relevant_documents?query=x&collection_name=a"),
        (b) => expect(b.detail).toContain("did you mean 'collection_names'?"),
      ],
      [
        "an unknown field",
        400,
        () => post("/load_text_to_collection?collection_name=c", JSON.stringify({ text: "x", metdata: {} }), "application/json"),
        () => {},
      ],
      ["malformed JSON", 400, () => post("/load_text_to_collection?collection_name=c", "{", "application/json"), () => {}],
      [
        "a malformed multipart part",
        400,
        () =>
          post(
            "/load_document_to_collection?collection_name=c",
            multipart("xyz", "no colon here\r\n\r\nbody\r\n"),
            "multipart/form-data; boundary=xyz",
          ),
        () => {},
      ],
      [
        "a form without its file",
        400,
        () =>
          post(
            "/load_document_to_collection?collection_name=c",
            multipart("xyz", 'Content-Disposition: form-data; name="metadata"\r\n\r\n{}\r\n'),
            "multipart/form-data; boundary=xyz",
          ),
        () => {},
      ],
      ["no token", 401, () => fetch(`${base}/get_list_of_collection`), () => {}],
      [
        "an unknown token",
        401,
        () => get("/get_list_of_collection", { headers: { authorization: "Bearer not-a-known-token-at-all" } }),
        () => {},
      ],
      [
        "a token without the scope",
        403,
        () => fetch(`${base}/delete_collection?collection_name=c`, { method: "DELETE", headers: { authorization: `Bearer ${READER}` } }),
        () => {},
      ],
      ["an unknown collection", 404, () => get("/get_list_of_documents_names?collection_name=nowhere"), () => {}],
      ["an unknown path", 404, () => get("/no_such_operation"), () => {}],
      ["a method the path does not serve", 405, () => get("/get_relevant_documents", { method: "DELETE" }), () => {}],
      [
        "a JSON body over MAX_BODY_BYTES",
        413,
        () => post("/load_text_to_collection?collection_name=c", JSON.stringify({ text: "x".repeat(5000) }), "application/json"),
        () => {},
      ],
      ["a file over MAX_UPLOAD_BYTES", 413, () => uploadFile("x".repeat(5000), "big.txt"), () => {}],
      ["an unsupported file type", 415, () => uploadFile(png, "pixel.png"), (b) => expect(b.media_type).toBe("image/png")],
      [
        "a body that is not JSON",
        415,
        () => post("/load_text_to_collection?collection_name=c", "text=hello", "application/x-www-form-urlencoded"),
        (b) => expect(b.media_type).toBe("application/x-www-form-urlencoded"),
      ],
      [
        "a charset the JSON parser cannot read",
        415,
        () => post("/load_text_to_collection?collection_name=c", "{}", "application/json; charset=klingon"),
        () => {},
      ],
      ["a URL over Node's header limit", 431, () => get(`/get_relevant_documents?query=${"a".repeat(20_000)}`), () => {}],
    ];

    it.each(cases)("%s: %i", async (_name, status, send, extra) => {
      const res = await send();
      expect(res.status).toBe(status);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      const body = (await res.json()) as Json;
      expect(problem(body), ajv.errorsText(problem.errors)).toBe(true);
      expect(problemClosed(body), `a member the schema does not list: ${ajv.errorsText(problemClosed.errors)}`).toBe(true);
      expect(body.status).toBe(status);
      expect(body.title).toBe(TITLES[status]);
      expect(body.request_id).toBe(res.headers.get("x-request-id"));
      extra(body);
    });

    it("documents each of those statuses on its operation", () => {
      const documented = (p: string, method: string, status: number) => {
        const responses = doc.paths[p][method].responses as Json;
        const response = responses[String(status)] ?? responses[`${String(status)[0]}XX`];
        return response?.content?.["application/problem+json"]?.schema?.$ref;
      };
      expect(documented("/get_relevant_documents", "post", 400)).toBe("#/components/schemas/Problem");
      expect(documented("/get_relevant_documents", "get", 431)).toBe("#/components/schemas/Problem");
      expect(documented("/load_document_to_collection", "post", 415)).toBe("#/components/schemas/Problem");
      expect(documented("/load_document_to_collection", "post", 413)).toBe("#/components/schemas/Problem");
      expect(documented("/delete_collection", "delete", 403)).toBe("#/components/schemas/Problem");
      expect(documented("/get_list_of_documents_names", "get", 503)).toBe("#/components/schemas/Problem");
    });
  });

  describe("the reference pages", () => {
    const page = async (route: string) => {
      const res = await fetch(`${base}${route}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      return res.text();
    };
    const unescape = (html: string) =>
      html
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, "&");
    const references = (html: string) => [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);

    it("serves /docs and /docs/filters with only assets docstore serves itself", async () => {
      for (const route of ["/docs", "/docs/filters"]) {
        const html = await page(route);
        const refs = references(html);
        expect(refs.length).toBeGreaterThan(3);
        for (const ref of refs) {
          expect(ref, `${route} refers to ${ref}`).toMatch(/^\/[^/]/);
          const res = await fetch(`${base}${ref}`);
          expect(res.status, ref).toBe(200);
          await res.arrayBuffer();
        }
        expect(refs).toContain("/docs/filters");
        expect(refs).toContain("/openapi.json");
      }
      const reference = await page("/docs");
      expect(reference).toContain('<script src="/docs/assets/swagger-ui-bundle.js"></script>');
      expect(reference).not.toMatch(/<script>|<style>/);
      const init = await (await fetch(`${base}/docs/assets/reference.js`)).text();
      expect(init).toContain('url: "/openapi.json"');
      expect(init).toContain("validatorUrl: null");
      expect((await fetch(`${base}/docs/assets/package.json`)).status).toBe(404);
    });

    it("explains the filter language, and its examples parse as it says", async () => {
      const html = await page("/docs/filters");
      expect(html).toContain("<h1>The filter language</h1>");
      const examples = html.slice(html.indexOf("<h2>Examples</h2>"));
      const filters = [...examples.matchAll(/<tr>\s*<td><code>([^<]+)<\/code><\/td>/g)].map((m) => unescape(m[1]!));
      expect(filters.length).toBeGreaterThanOrEqual(6);
      for (const f of filters) expect(() => parseFilter(f), f).not.toThrow();
      const errors = html.slice(html.indexOf("<h2>Errors</h2>"), html.indexOf("<h2>Examples</h2>"));
      const bad = [...errors.matchAll(/<code>([^<]+)<\/code>/g)].map((m) => unescape(m[1]!)).filter((f) => /^[a-z=]/.test(f));
      expect(bad.length).toBeGreaterThanOrEqual(6);
      for (const f of bad) expect(() => parseFilter(f), f).toThrow();
    });
  });
});
