/**
 * The Qdrant filter compiler against the reference evaluator: for random filters and random
 * metadata, the compiled filter (as sent, with its kind and tenant conditions) run by a JS
 * interpreter of Qdrant's filter semantics (interpret.ts) accepts every document the evaluator
 * accepts, and exactly those when the compiler says it is exact. The generators are those of
 * filter/agreement.property.test.ts, shared through testing/filter-arbitraries.ts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseMetadata, type Metadata } from "../domain/metadata.ts";
import { evaluate } from "./evaluate.ts";
import { parseFilter } from "./parse.ts";
import { compileFilter } from "./qdrant.ts";
import { matchesFilter } from "../../test-support/qdrant-interpret.ts";
import { documentPayload, chunkPayload } from "../index/qdrant/points.ts";
import { scopeFilter } from "../index/qdrant/query.ts";
import { KIND } from "../index/qdrant/schema.ts";
import { NOW, DAY, doc, condition, filterText } from "../../test-support/filter-arbitraries.ts";


/** What Qdrant would return for the compiled filter: the documents (of collection "c") it keeps. */
function selectedByQdrant(text: string, docs: readonly Metadata[], kind: "document" | "chunk") {
  const filter = parseFilter(text, NOW);
  const compiled = compileFilter(filter);
  const scoped = scopeFilter(kind === "document" ? KIND.document : KIND.chunk, ["c"], compiled.condition);
  const selected = docs.map((metadata, i) => {
    if (scoped === null) return false;
    const doc = { collection: "c", docId: `d${i}`, version: 1, metadata, text: "" };
    const payload = kind === "document" ? documentPayload(doc) : chunkPayload(doc, { index: 0, text: "", start: 0, end: 0 });
    return matchesFilter(scoped, payload);
  });
  return { filter, compiled, selected };
}

describe("Qdrant filter compiler against the reference evaluator", () => {
  it("selects a superset of the evaluator's documents, and exactly them when it says exact", () => {
    fc.assert(
      fc.property(
        fc.array(doc, { minLength: 20, maxLength: 40 }),
        fc.array(filterText, { minLength: 10, maxLength: 10 }),
        fc.constantFrom("document" as const, "chunk" as const),
        (docs, texts, kind) => {
          docs.forEach((d) => parseMetadata(d));
          for (const text of texts) {
            const { filter, compiled, selected } = selectedByQdrant(text, docs, kind);
            docs.forEach((d, i) => {
              const expected = evaluate(filter, d);
              if (expected) expect(selected[i], `${text} must keep ${JSON.stringify(d)}`).toBe(true);
              if (compiled.exact) expect(selected[i], `${text} (exact) on ${JSON.stringify(d)}`).toBe(expected);
            });
          }
        },
      ),
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
