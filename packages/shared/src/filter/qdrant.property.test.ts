/**
 * The Qdrant filter compiler against the reference evaluator: for random filters and random
 * metadata, the compiled filter (as sent, with its kind and tenant conditions) run by a JS
 * interpreter of Qdrant's filter semantics (qdrant-interpret.ts, which the in-memory stand-in
 * uses) accepts every document the evaluator accepts, and exactly those when the compiler says
 * it is exact. Where a real Qdrant is given (QDRANT_URL or QDRANT_BIN), the same generated
 * filters and documents run on it too: it must select exactly what the interpreter selects, so
 * both agree with the evaluator and with each other. The generators are those of
 * filter/agreement.property.test.ts, shared through testing/filter-arbitraries.ts.
 * QDRANT_FILTER_RUNS (default 60) sets how many generated cases run on the real server.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@qdrant/js-client-rest";
import type { Metadata } from "../domain/metadata.ts";
import { evaluate } from "./evaluate.ts";
import { parseFilter } from "./parse.ts";
import { compileFilter } from "./qdrant.ts";
import { matchesFilter } from "../../test-support/qdrant-interpret.ts";
import { documentPayload, chunkPayload, pointId } from "../index/qdrant/points.ts";
import { createQdrantClient } from "../index/qdrant/client.ts";
import { prepareCollection } from "../index/qdrant/setup.ts";
import { onRealQdrant, uniqueQdrantCollection } from "../../test-support/qdrant-server.ts";
import { scopeFilter } from "../index/qdrant/query.ts";
import { KIND } from "../index/qdrant/schema.ts";
import { NOW, DAY, doc, docBatch, filterText, tenFilters } from "../../test-support/filter-arbitraries.ts";

/** The payload of document i of collection `c`, as the index stores it. */
function payloadOf(c: string, i: number, metadata: Metadata, kind: "document" | "chunk") {
  const doc = { collection: c, docId: `d${i}`, version: 1, metadata, text: "" };
  return kind === "document" ? documentPayload(doc) : chunkPayload(doc, { index: 0, text: "", start: 0, end: 0 });
}

/** What Qdrant would return for the compiled filter: the documents (of collection "c") it keeps. */
function selectedByQdrant(text: string, docs: readonly Metadata[], kind: "document" | "chunk") {
  const filter = parseFilter(text, NOW);
  const compiled = compileFilter(filter);
  const scoped = scopeFilter(kind === "document" ? KIND.document : KIND.chunk, ["c"], compiled.condition);
  const selected = docs.map((metadata, i) => {
    if (scoped === null) return false;
    return matchesFilter(scoped, payloadOf("c", i, metadata, kind));
  });
  return { filter, compiled, selected };
}

describe("Qdrant filter compiler against the reference evaluator", () => {
  it("selects a superset of the evaluator's documents, and exactly them when it says exact", () => {
    fc.assert(
      fc.property(docBatch, tenFilters, fc.constantFrom("document" as const, "chunk" as const), (docs, texts, kind) => {
        for (const text of texts) {
          const { filter, compiled, selected } = selectedByQdrant(text, docs, kind);
          docs.forEach((d, i) => {
            const expected = evaluate(filter, d);
            if (expected) expect(selected[i], `${text} must keep ${JSON.stringify(d)}`).toBe(true);
            if (compiled.exact) expect(selected[i], `${text} (exact) on ${JSON.stringify(d)}`).toBe(expected);
          });
        }
      }),
      { numRuns: 400 },
    );
  });

  it("generates filters that compile exactly and filters that do not, and supersets that filter", () => {
    // Guards the generator: the property above proves little if every filter were inexact, or
    // if the inexact ones all compiled to "match everything".
    const docs = fc.sample(doc, { numRuns: 50, seed: 1 });
    const runs = fc.sample(filterText, { numRuns: 400, seed: 2 }).map((t) => selectedByQdrant(t, docs, "document"));
    const exact = runs.filter((r) => r.compiled.exact);
    const inexact = runs.filter((r) => !r.compiled.exact);
    expect(exact.length).toBeGreaterThan(100);
    expect(inexact.length).toBeGreaterThan(100);
    const partial = (r: (typeof runs)[number]) => r.selected.some(Boolean) && !r.selected.every(Boolean);
    expect(exact.filter(partial).length).toBeGreaterThan(20);
    expect(inexact.filter(partial).length).toBeGreaterThan(50);
    expect(NOW.getTime() - DAY).toBeLessThan(Date.parse("2024-05-06T00:00:00Z"));
  });
});

onRealQdrant("Qdrant filter compiler on a real Qdrant", (server) => {
  const realRuns = Number(process.env.QDRANT_FILTER_RUNS ?? 60);
  describe("Qdrant filter compiler on a real Qdrant", () => {
    const name = uniqueQdrantCollection("filters");
    const client = () => createQdrantClient({ url: server().url });
    beforeAll(async () => {
      // The production layout, payload indexes included: they decide how some conditions match.
      await prepareCollection(client(), name, 3);
    });
    afterAll(async () => {
      await client().deleteCollection(name);
    });

    it(
      "selects what the interpreter (and so the stand-in) selects, for the same filters and documents",
      async () => {
        let run = 0;
        let partial = 0;
        await fc.assert(
          fc.asyncProperty(docBatch, tenFilters, async (docs, texts) => {
            // Each run is a docstore collection of its own (the tenant key), in one Qdrant collection.
            const tenant = `run${run++}`;
            const kinds = ["document", "chunk"] as const;
            const points: Schemas["PointStruct"][] = kinds.flatMap((kind) =>
              docs.map((metadata, i) => ({
                id: pointId(tenant, `d${i}`, 1, kind === "document" ? "document" : 0),
                vector: {},
                payload: payloadOf(tenant, i, metadata, kind),
              })),
            );
            await client().upsert(name, { wait: true, points });
            for (const text of texts) {
              const filter = parseFilter(text, NOW);
              const compiled = compileFilter(filter);
              for (const kind of kinds) {
                const scoped = scopeFilter(kind === "document" ? KIND.document : KIND.chunk, [tenant], compiled.condition);
                const byInterpreter = docs.flatMap((m, i) =>
                  scoped !== null && matchesFilter(scoped, payloadOf(tenant, i, m, kind)) ? [`d${i}`] : [],
                );
                const byServer =
                  scoped === null
                    ? []
                    : (await client().scroll(name, { filter: scoped, limit: 1000, with_payload: ["doc_id"] })).points.map((p) =>
                        String(p.payload?.doc_id),
                      );
                const detail = `${text} (${kind}) on ${JSON.stringify(docs)}`;
                expect(byServer.sort(), detail).toEqual(byInterpreter.sort());
                if (byServer.length > 0 && byServer.length < docs.length) partial++;
                const byEvaluator = docs.flatMap((m, i) => (evaluate(filter, m) ? [`d${i}`] : []));
                if (compiled.exact) expect(byServer, detail).toEqual(byEvaluator.sort());
                else expect(byServer, detail).toEqual(expect.arrayContaining(byEvaluator));
              }
            }
          }),
          { numRuns: realRuns },
        );
        // Guards the check: most filters keep some documents and drop others.
        expect(partial).toBeGreaterThan(run * 5);
      },
      Math.max(300_000, realRuns * 5_000),
    );
  });
});
