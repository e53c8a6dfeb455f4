/**
 * The Qdrant filter compiler against the reference evaluator: for random filters and random
 * metadata, the compiled filter (as sent, with its kind and tenant conditions) run by a JS
 * interpreter of Qdrant's filter semantics (interpret.ts) accepts every document the evaluator
 * accepts, and exactly those when the compiler says it is exact. The generators are those of
 * filter/agreement.property.test.ts (copied: that file runs its own tests when imported).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseMetadata, type Metadata, type Scalar } from "../metadata.ts";
import { evaluate } from "../filter/evaluate.ts";
import { parseFilter } from "../filter/parse.ts";
import { compileFilter } from "./filter.ts";
import { matchesFilter } from "./interpret.ts";
import { documentPayload, chunkPayload } from "./points.ts";
import { scopeFilter } from "./query.ts";
import { KIND } from "./schema.ts";

const NOW = new Date("2024-05-03T12:00:00Z");
const DAY = 86_400_000;

// Strings that make the edge cases likely: case and Unicode folding (İ, ß, final sigma),
// code point vs UTF-16 order (U+FFFF vs emoji), numeric-looking text, NUL, `^`.
const STRINGS = [
  "open", "Open", "OPEN", "closed", "pending", "", " ", "a", "A", "b", "ab", "abc", "ABC", "report", "weekly Report",
  "İstanbul", "istanbul", "i̇", "straße", "STRASSE", "ss", "ΣΑΣ", "σας", "é", "e\u0301", "😀", "\uffff", "\ue000", "z",
  "10", "9", "007", "7", "1e3", "-1", "0.5", "true", "false", "a^b", "x,y", "a@b", "\u0000", "null", "[]",
];
/** Values for LIKE / STARTSWITH / ENDSWITH: case-folding pairs and pieces of number texts. */
const NEEDLES = ["", "a", "A", "OPEN", "pen", "İ", "i̇", "ss", "SS", "ß", "σ", "Σ", "ς", "e+", "1.0", ".", "0", "1e", "00", "😀", "\uffff", "^", "TRUE", "ru", "\u0000"];
const NUMBERS = [
  0, -0, 1, 2, 3, 7, 9, 10, -1, -2.5, 0.5, 0.1 + 0.2, 1000, 1e21, 1e-7, 5e-324, 2 ** 53 + 2, 2 ** 62, 2 ** 62 + 1024,
  -(2 ** 63), 1.7976931348623157e308,
];

const str = fc.constantFrom(...STRINGS);
const num = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NUMBERS) },
  { weight: 2, arbitrary: fc.integer({ min: -5, max: 12 }) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
);
const scalar: fc.Arbitrary<Scalar> = fc.oneof(str, num, fc.boolean());
const instantMs = fc.integer({ min: Date.parse("2024-04-28T00:00:00Z") / 1000, max: Date.parse("2024-05-06T00:00:00Z") / 1000 }).map((s) => s * 1000);
const canonical = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

const doc: fc.Arbitrary<Metadata> = fc.record(
  {
    sys_id: str,
    status: str,
    prev_status: str,
    type: str,
    priority: fc.oneof(fc.integer({ min: -2, max: 6 }), fc.constantFrom(2 ** 53 - 1, -(2 ** 53) + 1)),
    flag: fc.boolean(),
    created: instantMs.map(canonical),
    n: num,
    s: str,
    mix: scalar,
    tags: fc.array(scalar, { maxLength: 4 }),
    words: fc.array(str, { maxLength: 3 }),
  },
  { requiredKeys: [] },
);

const FIELDS = ["sys_id", "status", "prev_status", "type", "priority", "flag", "created", "n", "s", "mix", "tags", "words", "missing", "a.b"];
const field = fc.constantFrom(...FIELDS);

/** A value of the right type for `f`, as it would be written in a filter. */
function valueFor(f: string): fc.Arbitrary<string> {
  switch (f) {
    case "priority":
      return fc.oneof(fc.integer({ min: -3, max: 7 }).map(String), fc.constantFrom("+2", "-0", "007", "9007199254740991"));
    case "flag":
      return fc.constantFrom("true", "false");
    case "created":
      return fc.oneof(
        instantMs.map((ms) => canonical(ms)),
        instantMs.map((ms) => canonical(ms).slice(0, 10)),
        instantMs.map((ms) => canonical(ms).slice(0, 19).replace("T", " ")),
        instantMs.map((ms) => `${canonical(ms + 2 * 3_600_000).slice(0, 19)}+02:00`),
        fc.integer({ min: -3, max: 6 }).chain((n) =>
          fc.constantFrom(`javascript:gs.daysAgo(${n})`, `javascript:gs.daysAgoStart(${n})`, `javascript:gs.daysAgoEnd(${n})`),
        ),
        fc.constantFrom("javascript:gs.beginningOfToday()", "javascript:gs.endOfToday()"),
      );
    default:
      return fc.oneof(
        { weight: 3, arbitrary: str },
        { weight: 3, arbitrary: num.map(String) },
        { weight: 1, arbitrary: fc.constantFrom("1.0", "+7", ".5", "1E3", "0x10", "1e21", "4611686018427387904", "-0") },
      );
  }
}

const escape = (v: string) => v.replaceAll("^", "^^");
const listItem = (f: string) => valueFor(f).filter((v) => v !== "" && !v.includes(","));
const bound = (f: string) => valueFor(f).filter((v) => v !== "" && !v.includes("@"));

const condition: fc.Arbitrary<string> = field.chain((f) =>
  fc.oneof(
    fc.tuple(fc.constantFrom("=", "!=", "<", "<=", ">", ">="), valueFor(f)).map(([op, v]) => `${f}${op}${escape(v)}`),
    fc.tuple(fc.constantFrom("IN", "NOT IN"), fc.array(listItem(f), { minLength: 1, maxLength: 4 })).map(
      ([op, vs]) => `${f}${op}${vs.map(escape).join(",")}`,
    ),
    fc.tuple(fc.constantFrom("LIKE", "NOT LIKE", "NOTLIKE", "STARTSWITH", "ENDSWITH"), fc.oneof(str, fc.constantFrom(...NEEDLES))).map(([op, v]) => `${f}${op}${escape(v)}`),
    fc.tuple(bound(f), bound(f)).map(([lo, hi]) => `${f}BETWEEN${escape(lo)}@${escape(hi)}`),
    fc.constantFrom("ISEMPTY", "ISNOTEMPTY", "ANYTHING", "=", "!=").map((op) => `${f}${op}`),
    fc.tuple(fc.constantFrom("SAMEAS", "NSAMEAS"), field).map(([op, other]) => `${f}${op}${other}`),
  ),
);

const join = <T>(arb: fc.Arbitrary<T[]>, sep: string) => arb.map((xs) => xs.join(sep));
const group = join(fc.array(join(fc.array(condition, { minLength: 1, maxLength: 2 }), "^OR"), { minLength: 1, maxLength: 3 }), "^");
const orderTerm = fc.tuple(fc.boolean(), field).map(([desc, f]) => `ORDERBY${desc ? "DESC" : ""}${f}`);

const filterText: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof({ weight: 1, arbitrary: fc.constant([] as string[]) }, { weight: 6, arbitrary: fc.array(group, { minLength: 1, maxLength: 3 }) }),
    fc.array(orderTerm, { maxLength: 2 }),
    fc.boolean(),
  )
  .map(([groups, order, eq]) => [[...groups].join("^NQ"), ...order].filter((s) => s !== "").join("^") + (eq && groups.length > 0 ? "^EQ" : ""));


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
