/**
 * The API in every mode of api-modes.ts, writing: loading texts, files and batches, deletion,
 * bad input, and what the service serves beside its operations (probes, OpenAPI, console,
 * metrics, tokens). Reading (search, tag lookups, listing) is in api-read.test.ts.
 */
import { describe, expect, it } from "vitest";
import { apiModes, expectProblem, loadText as loadTextInto } from "./api-modes.ts";
import { serviceAround, uniqueName, until, type Reply, type Service } from "./harness.ts";

let svc: Service;
const loadText = (collection: string, text: string, metadata: object = {}, query: Record<string, string> = {}) =>
  loadTextInto(svc, collection, text, metadata, query);

describe.each(apiModes())("$name mode", ({ mode, env, index }) => {
  serviceAround({ mode, env, index }, (started) => (svc = started));
  it("says on start where the console and the API reference are", async () => {
    await until(async () => svc.output.includes("API reference"), 5000).catch(() => undefined);
    expect(svc.output).toContain(`\nconsole ${svc.url}/console/, API reference ${svc.url}/docs\n`);
    expect((await fetch(`${svc.url}/console/`)).status).toBe(200);
  });

  describe("loading", () => {
    it("queues a text with 202 and indexes it", async () => {
      const c = uniqueName();
      const r = await svc.request("POST", "/load_text_to_collection", {
        query: { collection_name: c },
        json: { text: "The quarterly report covers revenue.", metadata: { status: "open", priority: 2 } },
      });
      expect(r.status).toBe(202);
      expect(r.body).toMatchObject({ collection_name: c, status: "queued", version: 1 });
      expect(r.body.doc_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(typeof r.body.job_id).toBe("string");
      let status: Reply | undefined;
      for (let i = 0; i < 100; i++) {
        status = await svc.request("GET", "/get_document_status", { query: { collection_name: c, id_value: r.body.doc_id } });
        if (status.body.status === "ready") break;
        await new Promise((res) => setTimeout(res, 50));
      }
      expect(status!.body).toMatchObject({
        status: "ready",
        chunks: 1,
        metadata: { status: "open", priority: 2 },
        content_type: "text/plain",
      });
    });

    it("uploads a Markdown file with metadata as multipart", async () => {
      const c = uniqueName();
      const form = new FormData();
      form.append(
        "file",
        new Blob(["# Runbook\n\nRestart the ingestion gateway when it stalls."], { type: "text/markdown" }),
        "runbook.md",
      );
      form.append("metadata", JSON.stringify({ type: "runbook", sys_id: "a1b2c3" }));
      const r = await svc.request("POST", "/load_document_to_collection", { query: { collection_name: c, wait: "true" }, form });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ doc_id: "a1b2c3", status: "ready" });
      const list = await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: c } });
      expect(list.body.documents).toEqual([expect.objectContaining({ doc_id: "a1b2c3", name: "runbook.md", status: "ready" })]);
      const hits = await svc.request("GET", "/get_relevant_documents", { query: { query: "gateway stalls", collection_names: c } });
      expect(hits.body.results[0]).toMatchObject({
        doc_id: "a1b2c3",
        collection_name: c,
        chunk_index: 0,
        metadata: { type: "runbook" },
        heading_path: ["Runbook"],
      });
    });

    it("takes doc_id from the query, then metadata.sys_id", async () => {
      const c = uniqueName();
      expect((await loadText(c, "alpha", { sys_id: "sys1" }, { doc_id: "explicit-1" })).doc_id).toBe("explicit-1");
      expect((await loadText(c, "beta", { sys_id: "sys2" })).doc_id).toBe("sys2");
    });

    it("re-loading a sys_id replaces the old text", async () => {
      const c = uniqueName();
      await loadText(c, "The printer on floor three is jammed.", { sys_id: "inc001", status: "open" });
      const second = await loadText(c, "The scanner in the lobby is broken.", { sys_id: "inc001", status: "closed" });
      expect(second.version).toBe(2);
      const old = await svc.request("GET", "/get_relevant_documents", { query: { query: "printer jammed", collection_names: c } });
      expect(old.body.results).toEqual([]);
      const fresh = await svc.request("GET", "/get_relevant_documents", { query: { query: "scanner lobby", collection_names: c } });
      expect(fresh.body.results).toHaveLength(1);
      expect(fresh.body.results[0]).toMatchObject({ doc_id: "inc001", metadata: { status: "closed" } });
      const list = await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: c } });
      expect(list.body.documents).toHaveLength(1);
    });

    it("loads a batch of texts in one request", async () => {
      const c = uniqueName();
      const documents = Array.from({ length: 30 }, (_, i) => ({
        text: `batch item ${i} widget${i}`,
        doc_id: `b${i}`,
        metadata: { priority: i },
      }));
      const r = await svc.request("POST", "/load_texts_to_collection", {
        query: { collection_name: c, wait: "true" },
        json: { documents },
      });
      expect(r.status).toBe(200);
      expect(r.body.documents).toHaveLength(30);
      expect(r.body.documents.every((d: any) => d.status === "ready")).toBe(true);
      const hit = await svc.request("GET", "/get_relevant_documents", { query: { query: "widget17", collection_names: c } });
      expect(hit.body.results.map((h: any) => h.doc_id)).toEqual(["b17"]);
    });

    it("keeps the last text of a doc_id given twice in one batch", async () => {
      const c = uniqueName();
      const documents = [
        { text: "first draft mentions gannets", doc_id: "twice" },
        { text: "unrelated", doc_id: "other" },
        { text: "final text mentions puffins", metadata: { sys_id: "twice", status: "final" } },
      ];
      const r = await svc.request("POST", "/load_texts_to_collection", {
        query: { collection_name: c, wait: "true" },
        json: { documents },
      });
      expect(r.body.documents.map((d: any) => [d.doc_id, d.version])).toEqual([
        ["twice", 1],
        ["other", 1],
        ["twice", 2],
      ]);
      const tag = await svc.request("POST", "/get_content_by_tag", { query: { collection_name: c }, json: { tag_info: "" } });
      expect(tag.body.documents.find((d: any) => d.doc_id === "twice")).toMatchObject({
        text: "final text mentions puffins",
        metadata: { status: "final" },
      });
    });

    it("splits a long text into chunks with offsets", async () => {
      const c = uniqueName();
      const paragraphs = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} talks about topic${i} in some detail. `.repeat(8)).join(
        "\n\n",
      );
      const doc = await loadText(c, paragraphs);
      expect(doc.chunks).toBeGreaterThan(1);
      const hit = await svc.request("GET", "/get_relevant_documents", { query: { query: "topic33", collection_names: c, k: 1 } });
      const r = hit.body.results[0];
      expect(r.text).toContain("topic33");
      expect(paragraphs.slice(r.start, r.end)).toBe(r.text);
    });
  });

  describe("deletion", () => {
    it("deletes a document so nothing of it is found", async () => {
      const c = uniqueName();
      await loadText(c, "ephemeral falcon sighting", { sys_id: "gone", status: "open" });
      await loadText(c, "permanent eagle sighting", { sys_id: "kept", status: "open" });
      const del = await svc.request("DELETE", "/delete_document_from_collection", { query: { collection_name: c, id_value: "gone" } });
      expect(del.body).toEqual({ deleted: true, collection_name: c, doc_id: "gone" });
      const search = await svc.request("GET", "/get_relevant_documents", { query: { query: "falcon sighting", collection_names: c } });
      expect(search.body.results.map((h: any) => h.doc_id)).toEqual(["kept"]);
      const tag = await svc.request("GET", "/get_content_by_tag", { query: { collection_name: c, tag_info: "status=open" } });
      expect(tag.body.documents.map((d: any) => d.doc_id)).toEqual(["kept"]);
      const list = await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: c } });
      expect(list.body.documents.map((d: any) => d.doc_id)).toEqual(["kept"]);
      expectProblem(
        await svc.request("GET", "/get_document_status", { query: { collection_name: c, id_value: "gone" } }),
        404,
        /unknown document gone/,
      );
      expectProblem(
        await svc.request("DELETE", "/delete_document_from_collection", { query: { collection_name: c, id_value: "gone" } }),
        404,
        /unknown document/,
      );
    });

    it("deletes a collection and everything in it", async () => {
      const c = uniqueName();
      const other = uniqueName();
      await loadText(c, "migrating herons", { status: "open" });
      await loadText(other, "migrating geese", { status: "open" });
      const del = await svc.request("DELETE", "/delete_collection", { query: { collection_name: c } });
      expect(del.body).toEqual({ deleted: true, collection_name: c, documents: 1 });
      const cols = await svc.request("GET", "/get_list_of_collection");
      expect(cols.body.collections.map((x: any) => x.name)).not.toContain(c);
      expectProblem(
        await svc.request("GET", "/get_relevant_documents", { query: { query: "migrating", collection_names: c } }),
        404,
        /unknown collection/,
      );
      const everywhere = await svc.request("GET", "/get_relevant_documents", { query: { query: "migrating herons", k: 100 } });
      expect(everywhere.body.results.map((h: any) => h.collection_name)).not.toContain(c);
      expectProblem(await svc.request("DELETE", "/delete_collection", { query: { collection_name: c } }), 404, /unknown collection/);
      // Loading into the name again starts an empty collection.
      await loadText(c, "new life");
      const list = await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: c } });
      expect(list.body.documents).toHaveLength(1);
    });
  });

  describe("bad input", () => {
    it("rejects malformed metadata and bodies precisely", async () => {
      const c = uniqueName();
      const form = new FormData();
      form.append("file", new Blob(["hello"], { type: "text/plain" }), "a.txt");
      form.append("metadata", "{not json");
      expectProblem(await svc.request("POST", "/load_document_to_collection", { query: { collection_name: c }, form }), 400, /metadata/i);
      expectProblem(
        await svc.request("POST", "/load_text_to_collection", {
          query: { collection_name: c },
          json: { text: "x", metadata: { priority: "high" } },
        }),
        400,
        /priority/,
      );
      expectProblem(
        await svc.request("POST", "/load_text_to_collection", {
          query: { collection_name: c },
          json: { text: "x", metadata: { "Bad-Key": 1 } },
        }),
        400,
        /Bad-Key/,
      );
      expectProblem(
        await svc.request("POST", "/load_text_to_collection", {
          query: { collection_name: c },
          body: "{oops",
          contentType: "application/json",
        }),
        400,
        /not valid JSON/,
      );
      expectProblem(
        await svc.request("POST", "/load_text_to_collection", { query: { collection_name: c }, json: { text: "" } }),
        400,
        /text/,
      );
      expectProblem(
        await svc.request("POST", "/load_text_to_collection", { query: { collection_name: "../etc" }, json: { text: "x" } }),
        400,
        /collection_name/,
      );
      expectProblem(
        await svc.request("POST", "/load_text_to_collection", { query: {}, json: { text: "x" } }),
        400,
        /collection_name: is required/,
      );
      expectProblem(
        await svc.request("POST", "/load_text_to_collection", { query: { collection_name: c, doc_id: "a/b" }, json: { text: "x" } }),
        400,
        /doc_id/,
      );
    });

    it("refuses an unsupported file type with 415 and a missing file with 400", async () => {
      const c = uniqueName();
      const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
      const form = new FormData();
      form.append("file", new Blob([png], { type: "image/png" }), "pic.png");
      const r = await svc.request("POST", "/load_document_to_collection", { query: { collection_name: c }, form });
      expectProblem(r, 415, /image\/png/);
      const empty = new FormData();
      empty.append("metadata", "{}");
      expectProblem(await svc.request("POST", "/load_document_to_collection", { query: { collection_name: c }, form: empty }), 400, /file/);
    });

    it("answers unknown routes with a 404 problem", async () => {
      expectProblem(await svc.request("GET", "/nope"), 404, /no operation GET \/nope/);
    });
  });

  describe("probes and description", () => {
    it("serves health, readiness and OpenAPI without a token", async () => {
      expect((await svc.request("GET", "/healthz", { token: null })).body).toEqual({ status: "ok" });
      const ready = await svc.request("GET", "/readyz", { token: null });
      expect(ready.status).toBe(200);
      expect(ready.body.status).toBe("ready");
      const doc = await svc.request("GET", "/openapi.json", { token: null });
      expect(doc.body.openapi).toBe("3.1.0");
      for (const op of [
        "/load_document_to_collection",
        "/load_text_to_collection",
        "/get_relevant_documents",
        "/get_content_by_tag",
        "/get_list_of_documents_names",
        "/get_list_of_collection",
        "/delete_document_from_collection",
        "/delete_collection",
      ]) {
        expect(doc.body.paths[op], op).toBeDefined();
      }
      expect(doc.body.paths["/get_relevant_documents"].get.parameters.map((p: any) => p.name)).toContain("query");
      expect(doc.body.paths["/get_document_chunks"].get.security).toEqual([{ bearer: ["read"] }]);
    });

    it("serves the console without a token, and sends / there", async () => {
      const root = await fetch(new URL("/", svc.url), { redirect: "manual" });
      expect([root.status, root.headers.get("location")]).toEqual([302, "console/"]);
      const page = await svc.request("GET", "/console/", { token: null });
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      expect(page.headers.get("content-security-policy")).toMatch(
        /default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'/,
      );
      expect(page.body).toContain('<script type="module" src="app.js"></script>');
      const script = await svc.request("GET", "/console/views/search.js", { token: null });
      expect([script.status, script.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"]);
      const stopwords = await svc.request("GET", "/console/stopwords.js", { token: null });
      expect([stopwords.status, stopwords.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"]);
      expect(stopwords.headers.get("content-security-policy")).toBe(page.headers.get("content-security-policy"));
      expect(stopwords.body).toMatch(/^export const STOPWORDS = new Set\(\[.*"the".*\]\);$/m);
      expect((await svc.request("GET", "/console/tsconfig.json", { token: null })).status).toBe(404);
      expect((await svc.request("GET", "/console/../package.json", { token: null })).status).toBe(404);
    });

    it("serves Prometheus metrics to a token with the read scope", async () => {
      const r = await svc.request("GET", "/metrics");
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toMatch(/^text\/plain/);
      expect(r.body).toMatch(/docstore_http_requests_total\{method="POST",route="\/load_text_to_collection",status="200"\} \d+/);
      expect(r.body).toMatch(/docstore_documents\{status="ready"\} [1-9]\d*/);
      expect(r.body).toMatch(/docstore_collections [1-9]\d*/);
      expect((await svc.request("GET", "/metrics", { token: null })).status).toBe(401);
      // Every request counted once, under its route and status.
      const counted = async (route: string, status: number) => {
        const m = new RegExp(`docstore_http_requests_total\\{method="GET",route="${route}",status="${status}"\\} (\\d+)`).exec(
          (await svc.request("GET", "/metrics")).body,
        );
        return Number(m?.[1] ?? 0);
      };
      const [ok, missing] = [await counted("/get_list_of_collection", 200), await counted("/get_document_status", 404)];
      for (let i = 0; i < 3; i++) expect((await svc.request("GET", "/get_list_of_collection")).status).toBe(200);
      expect((await svc.request("GET", "/get_document_status?collection_name=none-such&id_value=x")).status).toBe(404);
      expect([await counted("/get_list_of_collection", 200), await counted("/get_document_status", 404)]).toEqual([ok + 3, missing + 1]);
    });

    it("demands a valid bearer token elsewhere", async () => {
      expectProblem(await svc.request("GET", "/get_list_of_collection", { token: null }), 401, /missing bearer token/);
      expectProblem(await svc.request("GET", "/get_list_of_collection", { token: "wrong-token-wrong-token" }), 401, /unknown bearer token/);
    });
  });
});
