/**
 * findDocuments on LanceDB against the reference: for generated metadata and filters (ORDERBY
 * on known and other fields included), the documents and their order are the evaluator's and
 * compareForOrder's, ties by collection and id, whichever path (sorted by LanceDB, or in JS) the
 * adapter takes.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseFilter } from "../filter/parse.ts";
import { NOW, docBatch, filterText, indexAsRows, referencePage } from "../../test-support/filter-arbitraries.ts";
import { LanceSearchIndex } from "./lancedb.ts";

const dir = mkdtempSync(path.join(tmpdir(), "docstore-lance-order-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const orderBy = fc
  .array(fc.constantFrom("created", "priority", "status", "flag", "type", "score", "tags"), { minLength: 1, maxLength: 2 })
  .chain((fields) => fc.tuple(...fields.map((f) => fc.boolean().map((d) => `ORDERBY${d ? "DESC" : ""}${f}`))));

describe("LanceDB findDocuments agrees with the reference evaluator and ordering", () => {
  it("selects, orders and pages the same documents", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        docBatch,
        fc.array(fc.tuple(filterText, orderBy, fc.nat(5)), { minLength: 6, maxLength: 6 }),
        async (docs, cases) => {
          const index = new LanceSearchIndex({ dir: path.join(dir, `run${run++}`), dimensions: null, maintainEveryMs: 0 });
          try {
            const ids = await indexAsRows(index, docs);
            for (const [base, terms, offset] of cases) {
              const text = [base.replace(/\^EQ$/, ""), ...terms].filter(Boolean).join("^");
              const filter = parseFilter(text, NOW);
              const expected = referencePage(docs, ids, filter, offset, 10);
              const found = await index.findDocuments({ collections: ["c"], filter, limit: 10, offset });
              expect(
                found.map((f) => f.docId),
                text,
              ).toEqual(expected);
            }
          } finally {
            await index.close();
          }
        },
      ),
      { numRuns: 15 },
    );
  }, 120_000);
});
