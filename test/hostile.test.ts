/**
 * Hostile input: every malformed request of hostile-cases.ts gets the 4xx it names, with
 * problem details, never a 5xx, and the service answers the next good request. Then random
 * garbage (fast-check): filters, JSON bodies, bytes, query strings; none gets a 5xx. In the
 * embedded mode, and in the distributed mode (catalog in Redis, S3) for all but the costly
 * cases (timeouts, endless bodies), whose handling is the HTTP server's own, not the mode's.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR_TOKENS } from "@docstore/shared/filter/condition";
import { removeDir, startService, uniqueName, type Mode, type Service } from "./harness.ts";
import { CASES, type Answer, type Target } from "./hostile-cases.ts";

const LIMITS = {
  MAX_UPLOAD_BYTES: "65536",
  MAX_BODY_BYTES: "1048576",
  // Short, so that the slow clients are timed out within the test.
  HTTP_HEADERS_TIMEOUT_MS: "1500",
  HTTP_REQUEST_TIMEOUT_MS: "3000",
};

/** What every refusal must be: the status named, as problem details. */
function expectProblem(answer: Answer, status: number, label: string) {
  const shown = `${label}: ${JSON.stringify(answer.body).slice(0, 300)}`;
  expect(answer.status, shown).toBe(status);
  expect(answer.contentType, shown).toMatch(/^application\/problem\+json/);
  expect(answer.body, shown).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
  expect(answer.body.title.length, shown).toBeGreaterThan(0);
  expect(answer.body.detail.length, shown).toBeGreaterThan(0);
}

/** A refusal, or (for random input that happens to be valid) a success; never a 5xx. */
function expectNoServerError(answer: { status: number; headers: Headers; body: any }, label: string) {
  const shown = `${label}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`;
  expect(answer.status, shown).toBeLessThan(500);
  if (answer.status >= 400) {
    expect(answer.headers.get("content-type"), shown).toMatch(/^application\/problem\+json/);
    expect(answer.body, shown).toMatchObject({ status: answer.status, title: expect.any(String), detail: expect.any(String) });
  }
}

for (const mode of ["embedded", "distributed"] as Mode[]) {
  describe(`hostile input (${mode})`, () => {
    let svc: Service;
    let t: Target;

    beforeAll(async () => {
      svc = await startService({
        mode,
        workers: mode === "distributed" ? 1 : 0,
        env: { ...LIMITS, ...(mode === "distributed" ? { CATALOG: "redis" } : {}) },
      });
      const collection = uniqueName("hostile");
      const loaded = await svc.request("POST", "/load_text_to_collection", {
        query: { collection_name: collection, doc_id: "heron-1", wait: "true" },
        json: { text: "The heron waded through the marsh", metadata: { status: "open" } },
      });
      expect(loaded.status, JSON.stringify(loaded.body)).toBe(200);
      t = {
        url: svc.url,
        token: svc.token,
        collection,
        docId: "heron-1",
        maxUploadBytes: Number(LIMITS.MAX_UPLOAD_BYTES),
        maxBodyBytes: Number(LIMITS.MAX_BODY_BYTES),
      };
    }, 60_000);

    afterAll(async () => {
      expect(await svc.stop()).toBe(0);
      removeDir(svc.dataDir);
      // Nothing a client sent was a server error, in the API or a worker.
      expect(svc.output).not.toMatch(/"level":5\d/);
    });

    /** The next good request is answered, and the document is still there. */
    async function stillServes() {
      const r = await svc.request("GET", "/get_relevant_documents", { query: { query: "heron", collection_names: t.collection } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.results.map((h: any) => h.doc_id)).toEqual(["heron-1"]);
    }

    if (mode === "embedded") {
      it("tries at least 300 malformed requests, across every operation", () => {
        expect(CASES.length).toBeGreaterThanOrEqual(300);
        const ops = new Set(CASES.map((c) => c.op));
        for (const op of [
          "load_document",
          "load_text",
          "load_texts",
          "search_get",
          "search_post",
          "tag_get",
          "tag_post",
          "list_documents",
          "list_collections",
          "status",
          "delete_document",
          "delete_collection",
          "doctor",
          "http",
        ]) {
          expect(ops, op).toContain(op);
        }
        console.log(
          `hostile input: ${CASES.length} malformed requests (${CASES.filter((c) => !c.costly).length} in every mode), ${ops.size} operations`,
        );
      });
    }

    for (const c of CASES.filter((c) => !c.costly)) {
      it(`${c.op}: ${c.name} → ${c.status}`, async () => {
        const answer = await c.send(t);
        expectProblem(answer, c.status, `${c.op}: ${c.name}`);
        await answer.closed;
        await stillServes();
      });
    }

    if (mode === "embedded") {
      describe.concurrent("costly: timeouts and endless bodies", () => {
        for (const c of CASES.filter((c) => c.costly)) {
          it(`${c.op}: ${c.name} → ${c.status}`, async () => {
            const answer = await c.send(t);
            expectProblem(answer, c.status, `${c.op}: ${c.name}`);
            // The server ends the connection: a client that goes on sending is not read forever.
            await answer.closed;
            await stillServes();
          });
        }
      });
    }

    it("random filters are answered or refused with problem details", async () => {
      const piece = fc.oneof(
        fc.constantFrom("^", "^OR", "^NQ", "^EQ", "^^", ...OPERATOR_TOKENS, "@", ",", "ORDERBY", "ORDERBYDESC"),
        fc.constantFrom(
          "status",
          "priority",
          "created",
          "flag",
          "note",
          "a.b",
          "Status",
          "1x",
          "open",
          "2024-05-01",
          "javascript:gs.daysAgo(3)",
          " ",
          "'",
          '"',
          "%",
          "_",
          "\u0000",
          "é",
          "\\",
          ";",
          "--",
        ),
        fc.string({ maxLength: 6 }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.array(piece, { maxLength: 12 }).map((p) => p.join("")),
          async (filter) => {
            const search = await svc.request("POST", "/get_relevant_documents", {
              query: { query: "heron" },
              json: { collection_names: [t.collection], metadata: filter },
            });
            expectNoServerError(search, `search ${JSON.stringify(filter)}`);
            const tag = await svc.request("GET", "/get_content_by_tag", { query: { collection_name: t.collection, tag_info: filter } });
            expectNoServerError(tag, `tag ${JSON.stringify(filter)}`);
          },
        ),
        { numRuns: 150 },
      );
      await stillServes();
    });

    it("random JSON bodies, bytes and query strings get no 5xx", async () => {
      const paths = ["/load_text_to_collection", "/load_texts_to_collection", "/get_relevant_documents", "/get_content_by_tag"];
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...paths), fc.jsonValue({ maxDepth: 4 }), async (path, value) => {
          const r = await svc.request("POST", path, {
            query: {
              collection_name: path.includes("relevant") ? undefined : t.collection,
              query: path.includes("relevant") ? "heron" : undefined,
            },
            json: value,
          });
          expectNoServerError(r, `${path} ${JSON.stringify(value).slice(0, 100)}`);
        }),
        { numRuns: 100 },
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...paths, "/load_document_to_collection"),
          fc.uint8Array({ maxLength: 512 }),
          fc.constantFrom("application/json", "text/plain", "multipart/form-data; boundary=x", ""),
          async (path, bytes, type) => {
            const headers: Record<string, string> = { authorization: `Bearer ${t.token}` };
            if (type) headers["content-type"] = type;
            const url = new URL(path, t.url);
            url.searchParams.set("collection_name", t.collection);
            const res = await fetch(url, { method: "POST", headers, body: bytes });
            const text = await res.text();
            let body: unknown = text;
            try {
              body = JSON.parse(text);
            } catch {
              // not JSON
            }
            expectNoServerError({ status: res.status, headers: res.headers, body }, `${path} ${type} ${bytes.length} random bytes`);
          },
        ),
        { numRuns: 100 },
      );
      await fc.assert(
        fc.asyncProperty(
          fc.dictionary(
            fc.string({ maxLength: 12 }),
            fc.oneof(fc.string({ maxLength: 40 }), fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 })),
            { maxKeys: 4 },
          ),
          async (query) => {
            for (const path of ["/get_relevant_documents", "/get_list_of_documents_names", "/get_document_status"]) {
              const r = await svc.request("GET", path, { query });
              expectNoServerError(r, `${path} ${JSON.stringify(query)}`);
            }
          },
        ),
        { numRuns: 60 },
      );
      await stillServes();
    });
  });
}
