/**
 * The SQLite compiler must agree with the reference evaluator and the reference ordering on
 * every well-typed filter. Filters are generated as strings from the grammar, so the parser
 * is in the loop too.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { parseMetadata } from "../domain/metadata.ts";
import { evaluate } from "./evaluate.ts";
import { compareForOrder } from "./order.ts";
import { parseFilter } from "./parse.ts";
import { FilterTestDb } from "../../test-support/filter-test-db.ts";
import { NOW, DAY, doc, filterText } from "../../test-support/filter-arbitraries.ts";

const db = new FilterTestDb();
afterAll(() => db.close());

describe("SQLite compiler agrees with the reference evaluator and ordering", () => {
  it("selects and orders the same documents", () => {
    fc.assert(
      fc.property(fc.array(doc, { minLength: 30, maxLength: 50 }), fc.array(filterText, { minLength: 10, maxLength: 10 }), (docs, texts) => {
        docs.forEach((d) => parseMetadata(d));
        db.load(docs);
        for (const text of texts) {
          const filter = parseFilter(text, NOW);
          const expected = docs
            .map((d, i) => ({ d, id: i + 1 }))
            .filter(({ d }) => evaluate(filter, d))
            .sort((a, b) => compareForOrder(a.d, b.d, filter.orderBy) || a.id - b.id)
            .map(({ id }) => id);
          expect(db.select(filter), text).toEqual(expected);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("generates filters that select something and filters that do not", () => {
    // Guards the generator: a property that only ever sees empty or full results proves little.
    const docs = fc.sample(doc, { numRuns: 50, seed: 1 });
    db.load(docs);
    const sizes = fc.sample(filterText, { numRuns: 300, seed: 2 }).map((t) => db.select(parseFilter(t, NOW)).length);
    expect(sizes.filter((n) => n === 0).length).toBeGreaterThan(20);
    expect(sizes.filter((n) => n > 0 && n < docs.length).length).toBeGreaterThan(100);
    expect(NOW.getTime() - DAY).toBeLessThan(Date.parse("2024-05-06T00:00:00Z"));
  });
});
