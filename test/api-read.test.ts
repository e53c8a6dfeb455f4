/**
 * The API in every mode of api-modes.ts, reading: search across collections, tag lookups in
 * ORDERBY order, listing documents, collections and a document's chunks, with their pages and
 * warnings. Writing is in api-load.test.ts.
 */
import { describe, expect, it } from "vitest";
import { apiModes, expectProblem, loadText as loadTextInto } from "./api-modes.ts";
import { serviceAround, uniqueName, type Service } from "./harness.ts";

let svc: Service;
const loadText = (collection: string, text: string, metadata: object = {}, query: Record<string, string> = {}) =>
  loadTextInto(svc, collection, text, metadata, query);

describe.each(apiModes())("$name mode", ({ mode, env, index }) => {
  serviceAround({ mode, env, index }, (started) => (svc = started));
  describe("search", () => {
    it("ranks one list across two collections with a filter", async () => {
      const a = uniqueName("a");
      const b = uniqueName("b");
      await loadText(a, "Database outage in the billing cluster", { status: "open", priority: 1 });
      await loadText(a, "Database maintenance window announced", { status: "closed", priority: 3 });
      await loadText(b, "Database replica lag on the billing cluster", { status: "open", priority: 2 });
      await loadText(b, "Office coffee machine is empty", { status: "open", priority: 1 });
      const r = await svc.request("POST", "/get_relevant_documents", {
        query: { query: "database billing", k: 10 },
        json: { collection_names: [a, b], metadata: "status=open^priorityIN1,2" },
      });
      expect(r.status).toBe(200);
      const got = r.body.results.map((h: any) => [h.collection_name, h.metadata.priority]);
      expect(got).toHaveLength(2);
      expect(new Set(got.map((g: any) => g[0]))).toEqual(new Set([a, b]));
      expect(r.body.results[0].score).toBeGreaterThanOrEqual(r.body.results[1].score);
    });

    it("accepts GET with query parameters, comma lists and a JSON body", async () => {
      const a = uniqueName("a");
      const b = uniqueName("b");
      await loadText(a, "kubernetes pod eviction", { type: "memo" });
      await loadText(b, "kubernetes node pressure", { type: "report" });
      const viaQuery = await svc.request("GET", "/get_relevant_documents", {
        query: { query: "kubernetes", collection_names: `${a},${b}`, metadata: "type=report" },
      });
      expect(viaQuery.body.results.map((h: any) => h.collection_name)).toEqual([b]);
      const repeated = await svc.request("GET", "/get_relevant_documents", { query: { query: "kubernetes", collection_names: [a, b] } });
      expect(repeated.body.results).toHaveLength(2);
      const withBody = await svc.request("GET", "/get_relevant_documents", {
        query: { query: "kubernetes" },
        json: { collection_names: [a, b], metadata: "type=memo" },
      });
      expect(withBody.body.results.map((h: any) => h.collection_name)).toEqual([a]);
    });

    it("respects k and rejects bad parameters precisely", async () => {
      const c = uniqueName();
      for (let i = 0; i < 5; i++) await loadText(c, `shared term zebra number ${i}`);
      const two = await svc.request("GET", "/get_relevant_documents", { query: { query: "zebra", collection_names: c, k: 2 } });
      expect(two.body.results).toHaveLength(2);
      expectProblem(
        await svc.request("GET", "/get_relevant_documents", { query: { query: "zebra", k: 0 } }),
        400,
        /^k: expected an integer from 1 to 100 \(the server's MAX_K\); received "0"$/,
      );
      expectProblem(
        await svc.request("GET", "/get_relevant_documents", { query: { query: "zebra", k: 101 } }),
        400,
        /^k: expected an integer from 1 to 100 \(the server's MAX_K\); received "101"$/,
      );
      expectProblem(await svc.request("GET", "/get_relevant_documents", { query: { k: 3 } }), 400, /query/);
      expectProblem(
        await svc.request("GET", "/get_relevant_documents", { query: { query: "zebra", collection_names: "no-such-collection" } }),
        404,
        /unknown collection: no-such-collection/,
      );
      // One edit away from an existing collection: its name is suggested, as for fields.
      const typo = `${c.slice(0, -1)}${c.endsWith("x") ? "y" : "x"}`;
      const meant = new RegExp(`^unknown collection: ${typo} \\(did you mean ${c}\\?\\)$`);
      expectProblem(await svc.request("GET", "/get_relevant_documents", { query: { query: "zebra", collection_names: typo } }), 404, meant);
      expectProblem(await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: typo } }), 404, meant);
      expectProblem(await svc.request("DELETE", "/delete_collection", { query: { collection_name: typo } }), 404, meant);
    });

    it("reports a malformed filter with its position", async () => {
      const c = uniqueName();
      await loadText(c, "something");
      const r = await svc.request("GET", "/get_relevant_documents", {
        query: { query: "x", collection_names: c, metadata: "status=open^priority>high" },
      });
      expectProblem(r, 400, /^metadata: .*priority.* at position \d+/);
      expect(typeof r.body.position).toBe("number");
      const t = await svc.request("POST", "/get_content_by_tag", { query: { collection_name: c }, json: { tag_info: "status" } });
      expectProblem(t, 400, /^tag_info: .* at position \d+/);
    });
  });

  describe("content by tag and listing", () => {
    it("returns matching documents in ORDERBY order, paginated", async () => {
      const c = uniqueName();
      for (const p of [3, 1, 2, 5, 4])
        await loadText(c, `ticket with priority ${p}`, { sys_id: `t${p}`, priority: p, status: p % 2 ? "open" : "closed" });
      const all = await svc.request("GET", "/get_content_by_tag", {
        query: { collection_name: c, tag_info: "status=open^ORDERBYDESCpriority" },
      });
      expect(all.body.documents.map((d: any) => d.doc_id)).toEqual(["t5", "t3", "t1"]);
      expect(all.body.documents[0]).toMatchObject({ collection_name: c, text: "ticket with priority 5", metadata: { priority: 5 } });
      const page1 = await svc.request("POST", "/get_content_by_tag", {
        query: { collection_name: c, limit: 2 },
        json: { tag_info: "ORDERBYpriority" },
      });
      expect(page1.body.documents.map((d: any) => d.doc_id)).toEqual(["t1", "t2"]);
      const page2 = await svc.request("POST", "/get_content_by_tag", {
        query: { collection_name: c, limit: 2, cursor: page1.body.next_cursor },
        json: { tag_info: "ORDERBYpriority" },
      });
      expect(page2.body.documents.map((d: any) => d.doc_id)).toEqual(["t3", "t4"]);
      const page3 = await svc.request("POST", "/get_content_by_tag", {
        query: { collection_name: c, limit: 2, cursor: page2.body.next_cursor },
        json: { tag_info: "ORDERBYpriority" },
      });
      expect(page3.body).toMatchObject({ documents: [expect.objectContaining({ doc_id: "t5" })], next_cursor: null });
      expectProblem(await svc.request("GET", "/get_content_by_tag", { query: { collection_name: c, cursor: "garbage" } }), 400, /cursor/);
    });

    it("returns every item when no limit is given, streamed past the internal page sizes", async () => {
      const c = uniqueName();
      // Past the catalog's page of 500 and the index's batch of 100 (and the old default page
      // of 100); the distributed modes index slower, so they cross the index's batches only.
      const n = mode === "embedded" ? 620 : 130;
      const documents = Array.from({ length: n }, (_, i) => ({
        text: `row ${i}`,
        doc_id: `r${String(i).padStart(4, "0")}`,
        metadata: { priority: i, status: i % 2 ? "odd" : "even" },
      }));
      for (let i = 0; i < n; i += 100) {
        const loaded = await svc.request("POST", "/load_texts_to_collection", {
          query: { collection_name: c, wait: "true" },
          json: { documents: documents.slice(i, i + 100) },
        });
        expect(loaded.status, JSON.stringify(loaded.body).slice(0, 300)).toBe(200);
      }
      const ids = documents.map((d) => d.doc_id);

      const list = await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: c } });
      expect(list.status).toBe(200);
      expect(list.headers.get("content-length")).toBeNull(); // streamed, not buffered
      expect(list.body.collection_name).toBe(c);
      expect(list.body.documents.map((d: any) => d.doc_id)).toEqual(ids);
      expect(list.body.next_cursor).toBeNull();

      const tag = await svc.request("POST", "/get_content_by_tag", {
        query: { collection_name: c },
        json: { tag_info: "ORDERBYDESCpriority" },
      });
      expect(tag.headers.get("content-length")).toBeNull();
      expect(tag.body.documents.map((d: any) => d.doc_id)).toEqual([...ids].reverse());
      expect(tag.body.documents[0]).toMatchObject({ collection_name: c, text: `row ${n - 1}`, metadata: { priority: n - 1 } });
      expect(tag.body).not.toHaveProperty("warnings");
      const even = await svc.request("GET", "/get_content_by_tag", { query: { collection_name: c, tag_info: "status=even" } });
      expect(even.body.documents.map((d: any) => d.doc_id)).toEqual(ids.filter((_, i) => i % 2 === 0));

      // limit and cursor still page; a cursor without a limit streams the rest.
      const first = await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: c, limit: 100 } });
      expect(first.body.documents).toHaveLength(100);
      const rest = await svc.request("GET", "/get_list_of_documents_names", {
        query: { collection_name: c, cursor: first.body.next_cursor },
      });
      expect(rest.body.documents.map((d: any) => d.doc_id)).toEqual(ids.slice(100));
      const tagFirst = await svc.request("GET", "/get_content_by_tag", {
        query: { collection_name: c, limit: 50, tag_info: "ORDERBYpriority" },
      });
      const tagRest = await svc.request("GET", "/get_content_by_tag", {
        query: { collection_name: c, cursor: tagFirst.body.next_cursor, tag_info: "ORDERBYpriority" },
      });
      expect(tagRest.body.documents.map((d: any) => d.doc_id)).toEqual(ids.slice(50));
    });

    it("warns beside the answer about filter values that look like typos", async () => {
      const c = uniqueName();
      await loadText(c, "the lighthouse keeper's log", { status: "open", owner: "ann" });
      const search = (metadata: string) =>
        svc.request("POST", "/get_relevant_documents", { query: { query: "lighthouse" }, json: { collection_names: [c], metadata } });
      const doubled = await search("status==open");
      expect(doubled.status).toBe(200);
      expect(doubled.body.results).toEqual([]); // docs/filters.md's meaning is kept: status equals "=open"
      expect(doubled.body.warnings).toEqual([
        'metadata: status: the value "=open" starts with "=", an operator character, and is compared as written; to compare with "open", write status=open',
      ]);
      expect((await search("stauts=open")).body.warnings).toEqual([
        "metadata: stauts: no document in the searched collections has this field; did you mean status?",
      ]);
      const clean = await search("status=open^owner=ann");
      expect(clean.body.results).toHaveLength(1);
      expect(clean.body).not.toHaveProperty("warnings");
      // A doubled ^ and an & are part of the value (docs/filters.md): the answer is empty, and says why.
      for (const [filter, sep] of [
        ["status=open^^owner=ann", "^"],
        ["status=open&owner=ann", "&"],
      ]) {
        const joined = await search(filter!);
        expect(joined.body.results).toEqual([]);
        expect(joined.body.warnings).toEqual([
          expect.stringMatching(
            new RegExp(
              `^metadata: status: the value "open\\${sep}owner=ann" holds "\\${sep}owner=ann" because .*, so status is compared with all of it, not with "open"`,
            ),
          ),
        ]);
      }
      // ORDERBY sorts tag lookups; a search ranks by relevance, so it is refused, not ignored.
      expectProblem(
        await search("status=open^ORDERBYDESCowner"),
        400,
        /^metadata: ORDERBY is not accepted here: search results are ranked by relevance/,
      );
      // A query of stopwords alone finds nothing, and says so.
      const stop = await svc.request("POST", "/get_relevant_documents", { query: { query: "of and" }, json: { collection_names: [c] } });
      expect(stop.status).toBe(200);
      expect(stop.body.results).toEqual([]);
      expect(stop.body.warnings).toEqual([
        'query: every word of the query is a stopword ("of", "and"), which full-text search leaves out; add a word that says what to find',
      ]);
      const tag = await svc.request("GET", "/get_content_by_tag", { query: { collection_name: c, tag_info: "owner=ann^^^ORDERBYcolour" } });
      expect(tag.body).toEqual({
        warnings: [
          'tag_info: owner: the value "ann^" ends with "^" because "^^" in a value is a literal "^"; to join two conditions, write one "^" between them',
          "tag_info: colour: no document in the searched collections has this field",
        ],
        documents: [],
        next_cursor: null,
      });
      // The fields are held for a while (known-fields.ts), and read afresh before a warning: one
      // added since is not warned about.
      await loadText(c, "the lighthouse lamp", { colour: "red" });
      const added = await search("colour=red");
      expect(added.body).not.toHaveProperty("warnings");
      expect(added.body.results).toHaveLength(1);
      // Deleted and made again: the old documents' fields go with them.
      expect((await svc.request("DELETE", "/delete_collection", { query: { collection_name: c } })).status).toBe(200);
      await loadText(c, "the lighthouse keeper", { keeper: "bob" });
      expect((await search("owner=ann")).body.warnings).toEqual([
        expect.stringMatching(/^metadata: owner: no document in the searched collections has this field/),
      ]);
    });

    it("lists documents with size, type and failure reason, selected by status and metadata filter", async () => {
      const c = uniqueName();
      for (let i = 0; i < 7; i++) await loadText(c, `note ${i}`, { priority: i, team: i % 2 ? "red" : "blue" }, { doc_id: `n${i}` });
      const form = new FormData();
      form.append("file", new Blob(["%PDF-1.4\nnot really a pdf"], { type: "application/pdf" }), "broken.pdf");
      form.append("metadata", JSON.stringify({ priority: 9, team: "red" }));
      const broken = await svc.request("POST", "/load_document_to_collection", {
        query: { collection_name: c, doc_id: "broken", wait: "true" },
        form,
      });
      expect(broken.body.status).toBe("failed");

      const list = (query: Record<string, string | number>) =>
        svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: c, ...query } });
      const failed = await list({ status: "failed" });
      expect(failed.body.documents).toEqual([
        {
          doc_id: "broken",
          name: "broken.pdf",
          status: "failed",
          version: 1,
          chunks: 0,
          size: 25,
          content_type: "application/pdf",
          error: broken.body.error,
          updated_at: expect.any(String),
        },
      ]);
      expect(failed.body.documents[0].error).toMatch(/PDF/);
      const [n0] = (await list({ limit: 1 })).body.documents;
      expect(n0).toMatchObject({ doc_id: "broken" }); // doc_id order: "broken" < "n0"
      expect((await list({ tag_info: "team=red^priority>=3" })).body.documents.map((d: any) => d.doc_id)).toEqual(["broken", "n3", "n5"]);
      expect((await list({ tag_info: "team=red^priority>=3", status: "ready" })).body.documents.map((d: any) => d.doc_id)).toEqual([
        "n3",
        "n5",
      ]);
      const ready = (await list({ status: "ready" })).body.documents;
      expect(ready[0]).toMatchObject({ doc_id: "n0", size: 6, content_type: "text/plain", error: null, chunks: 1 });

      // Pages of a selection: full pages while matches remain, and no empty last page.
      const p1 = await list({ tag_info: "team=blue", limit: 2 });
      expect(p1.body.documents.map((d: any) => d.doc_id)).toEqual(["n0", "n2"]);
      const p2 = await list({ tag_info: "team=blue", limit: 2, cursor: p1.body.next_cursor });
      expect(p2.body).toMatchObject({ documents: [{ doc_id: "n4" }, { doc_id: "n6" }], next_cursor: null });

      expectProblem(await list({ tag_info: "team=red^ORDERBYpriority" }), 400, /^tag_info: ORDERBY is not accepted here/);
      const syntax = await list({ tag_info: "team=red^priorityBETWEEN1" });
      expectProblem(syntax, 400, /^tag_info: /);
      expect(syntax.body.position).toEqual(expect.any(Number));
      expectProblem(await list({ status: "done" }), 400, /^status: expected one of queued, processing, ready, failed, pending/);
      expect((await list({ tag_info: "taem=red" })).body.warnings).toEqual([
        "tag_info: taem: no document in the searched collections has this field",
      ]);
    });

    it("gives a document's chunks with their citations, a page at a time", async () => {
      const c = uniqueName();
      const text = [
        "# Birds",
        "",
        ...Array.from({ length: 60 }, (_, i) => `Sentence ${i} tells of herons wading at dawn near the marsh.`),
        "",
        "## Storks",
        "",
        "Storks migrate south.",
      ].join("\n");
      const form = new FormData();
      form.append("file", new Blob([text], { type: "text/markdown" }), "birds.md");
      const loaded = await svc.request("POST", "/load_document_to_collection", {
        query: { collection_name: c, doc_id: "birds", wait: "true" },
        form,
      });
      expect(loaded.body).toMatchObject({ status: "ready" });
      const all = await svc.request("GET", "/get_document_chunks", { query: { collection_name: c, id_value: "birds" } });
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ collection_name: c, doc_id: "birds", status: "ready", version: 1, next_cursor: null });
      const chunks = all.body.chunks as { chunk_index: number; text: string; start: number; end: number; heading_path?: string[] }[];
      expect(chunks.length).toBe(loaded.body.chunks);
      expect(chunks.map((ch) => ch.chunk_index)).toEqual(chunks.map((_, i) => i));
      expect(chunks[0]).toMatchObject({ start: 0, heading_path: ["Birds"] });
      expect(chunks.at(-1)!.text).toContain("Storks migrate south.");
      expect(chunks.every((ch) => text.slice(ch.start, ch.end) === ch.text)).toBe(true);
      const hit = await svc.request("GET", "/get_relevant_documents", { query: { query: "storks migrate", collection_names: c, k: 1 } });
      const last = chunks.at(-1)!;
      expect(hit.body.results[0]).toMatchObject({
        chunk_index: last.chunk_index,
        start: last.start,
        end: last.end,
        text: last.text,
        heading_path: last.heading_path,
      });

      const page = await svc.request("GET", "/get_document_chunks", { query: { collection_name: c, id_value: "birds", limit: 1 } });
      expect(page.body.chunks).toEqual([chunks[0]]);
      const rest = await svc.request("GET", "/get_document_chunks", {
        query: { collection_name: c, id_value: "birds", cursor: page.body.next_cursor },
      });
      expect(rest.body.chunks).toEqual(chunks.slice(1));

      const queued = await svc.request("POST", "/load_text_to_collection", {
        query: { collection_name: c, doc_id: "later" },
        json: { text: "not yet indexed, maybe" },
      });
      const pending = await svc.request("GET", "/get_document_chunks", { query: { collection_name: c, id_value: "later" } });
      expect(pending.status).toBe(200);
      expect(pending.body.status === "ready" || pending.body.chunks.length === 0, JSON.stringify(pending.body)).toBe(true);
      expect(queued.status).toBe(202);
      expectProblem(
        await svc.request("GET", "/get_document_chunks", { query: { collection_name: c, id_value: "nope" } }),
        404,
        /unknown document nope/,
      );
      expectProblem(
        await svc.request("GET", "/get_document_chunks", { query: { collection_name: c, id_value: "birds", limit: 0 } }),
        400,
        /^limit: /,
      );
      expectProblem(
        await svc.request("GET", "/get_document_chunks", { query: { collection_name: c, id_value: "birds", cursor: "garbage" } }),
        400,
        /^cursor: /,
      );
    });

    it("lists documents and collections with pagination", async () => {
      const c = uniqueName();
      for (let i = 0; i < 5; i++) await loadText(c, `doc ${i}`, {}, { doc_id: `d${i}` });
      const p1 = await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: c, limit: 3 } });
      expect(p1.body.documents.map((d: any) => d.doc_id)).toEqual(["d0", "d1", "d2"]);
      const p2 = await svc.request("GET", "/get_list_of_documents_names", {
        query: { collection_name: c, limit: 3, cursor: p1.body.next_cursor },
      });
      expect(p2.body).toMatchObject({ documents: [{ doc_id: "d3" }, { doc_id: "d4" }], next_cursor: null });
      const cols = await svc.request("GET", "/get_list_of_collection");
      expect(cols.body.collections).toContainEqual({ name: c, documents: 5, ready: 5, pending: 0, failed: 0 });
      expectProblem(
        await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: uniqueName() } }),
        404,
        /unknown collection/,
      );
    });
  });
});
