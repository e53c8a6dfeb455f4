/**
 * findDocuments on Qdrant against the reference: for generated metadata and filters (ORDERBY on
 * known and other fields, small pages so that ties meet a page's edge), the documents and their
 * order are the evaluator's and compareForOrder's, ties by collection and id, whichever path
 * the adapter takes (Qdrant's order_by, or every match sorted here). On the stand-in, and on a
 * real Qdrant when one is given.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseFilter } from "../../filter/parse.ts";
import { NOW, docBatch, filterText, indexAsRows, referencePage } from "../../../test-support/filter-arbitraries.ts";
import { FakeQdrant } from "../../../test-support/qdrant-fake.ts";
import { deleteQdrantCollection, QdrantTestServer, qdrantSource, uniqueQdrantCollection } from "../../../test-support/qdrant-server.ts";
import { createQdrantClient, type QdrantApi } from "./client.ts";
import { QdrantSearchIndex } from "./search-index.ts";

const orderBy = fc
  .array(fc.constantFrom("created", "priority", "created", "priority", "status", "flag", "score"), { minLength: 1, maxLength: 2 })
  .chain((fields) => fc.tuple(...fields.map((f) => fc.boolean().map((d) => `ORDERBY${d ? "DESC" : ""}${f}`))));
/** Filters that keep most documents, so that pages are full and ties cross their edges. */
const loose = fc.constantFrom("", "", "status!=closed", "priority>=1", "statusISNOTEMPTY", "flag!=true");

function agrees(client: (name: string) => { api: QdrantApi; cleanup(): Promise<void> }, runs: number) {
  return async () => {
    await fc.assert(
      fc.asyncProperty(
        docBatch,
        fc.array(fc.tuple(fc.oneof(loose, filterText), orderBy, fc.nat(6), fc.integer({ min: 1, max: 5 })), { minLength: 6, maxLength: 6 }),
        async (docs, cases) => {
          const name = uniqueQdrantCollection("order");
          const { api, cleanup } = client(name);
          const index = new QdrantSearchIndex({ client: api, dimensions: null, collectionName: name });
          try {
            const ids = await indexAsRows(index, docs);
            for (const [base, terms, offset, limit] of cases) {
              const text = [base.replace(/\^EQ$/, ""), ...terms].filter(Boolean).join("^");
              const filter = parseFilter(text, NOW);
              const expected = referencePage(docs, ids, filter, offset, limit);
              const found = await index.findDocuments({ collections: ["c"], filter, limit, offset });
              expect(
                found.map((f) => f.docId),
                `${text} offset ${offset} limit ${limit}`,
              ).toEqual(expected);
              expect(found.map((f) => f.text)).toEqual(found.map((f) => `row ${Number(f.docId.slice(1))}`));
              // Each document's own metadata, as JSON carries it (-0 comes back 0), floats aside:
              // Qdrant may give back one of the extreme ones a unit in the last place away.
              const comparable = (m: object) =>
                JSON.stringify(m, (_k, v: unknown) => (typeof v === "number" && !Number.isSafeInteger(v) ? "float" : v));
              expect(found.map((f) => comparable(f.metadata))).toEqual(found.map((f) => comparable(docs[Number(f.docId.slice(1))]!)));
            }
          } finally {
            await index.close();
            await cleanup();
          }
        },
      ),
      { numRuns: runs },
    );
  };
}

describe("Qdrant findDocuments agrees with the reference evaluator and ordering", () => {
  it(
    "on the stand-in: selects, orders and pages the same documents",
    agrees(() => ({ api: new FakeQdrant(), cleanup: async () => {} }), 40),
    120_000,
  );
});

if (qdrantSource() !== null) {
  describe("Qdrant findDocuments agrees with the reference evaluator and ordering (real server)", () => {
    let server: QdrantTestServer | null = null;
    beforeAll(async () => {
      server = await QdrantTestServer.fromEnv();
    });
    afterAll(async () => {
      await server?.close();
    });
    it(
      "selects, orders and pages the same documents",
      () =>
        agrees(
          (name) => ({ api: createQdrantClient({ url: server!.url }), cleanup: () => deleteQdrantCollection(server!.url, name) }),
          15,
        )(),
      300_000,
    );
  });
}
