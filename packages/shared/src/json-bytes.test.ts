import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonBytes } from "./json-bytes.ts";

describe("jsonBytes", () => {
  it("writes the bytes JSON.stringify writes, its arrays an element at a time", () => {
    // Members of any JSON value, undefined (left out) and arrays with holes and undefined elements (null).
    const member = fc.oneof(
      fc.jsonValue({ stringUnit: "binary" }),
      fc.constant(undefined),
      fc.array(fc.oneof(fc.jsonValue({ stringUnit: "binary" }), fc.constant(undefined)), { maxLength: 5 }),
      fc.sparseArray(fc.string({ unit: "grapheme" }), { maxLength: 5 }),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: "binary" }), member, { maxKeys: 5 }), (body) => {
        expect(jsonBytes(body).toString("utf8")).toBe(JSON.stringify(body));
      }),
      { numRuns: 1000 },
    );
  });

  it("gives one-byte texts and two-byte ones the same bytes as a whole answer", () => {
    const documents = Array.from({ length: 100 }, (_, i) => ({
      doc_id: `d${i}`,
      text: i % 7 === 0 ? `α-synuclein ≥ ${i} é` : `plain ${i}`,
    }));
    const body = { warnings: [], documents, next_cursor: null };
    expect(jsonBytes(body).equals(Buffer.from(JSON.stringify(body), "utf8"))).toBe(true);
  });
});
