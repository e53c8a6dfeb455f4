/**
 * Generators for the filter language's property tests: metadata documents rich in edge cases
 * (case and Unicode folding, code-point order, numeric-looking text, arrays, missing fields)
 * and well-typed filter strings built from the grammar. Every backend's agreement test with the
 * reference evaluator uses the same ones.
 */
import fc from "fast-check";
import { parseMetadata, type Metadata, type Scalar } from "../src/domain/metadata.ts";
import type { SearchIndex } from "../src/ports.ts";
import type { Filter } from "../src/filter/ast.ts";
import { compareCodePoints } from "../src/filter/compare.ts";
import { evaluate } from "../src/filter/evaluate.ts";
import { compareForOrder } from "../src/filter/order.ts";

export const NOW = new Date("2024-05-03T12:00:00Z");
export const DAY = 86_400_000;

// Strings that make the edge cases likely: case and Unicode folding (İ, ß, final sigma),
// code point vs UTF-16 order (U+FFFF vs emoji), numeric-looking text, NUL, `^`.
const STRINGS = [
  "open",
  "Open",
  "OPEN",
  "closed",
  "pending",
  "",
  " ",
  "a",
  "A",
  "b",
  "ab",
  "abc",
  "ABC",
  "report",
  "weekly Report",
  "İstanbul",
  "istanbul",
  "i̇",
  "straße",
  "STRASSE",
  "ss",
  "ΣΑΣ",
  "σας",
  "é",
  "e\u0301",
  "😀",
  "\uffff",
  "\ue000",
  "z",
  "10",
  "9",
  "007",
  "7",
  "1e3",
  "-1",
  "0.5",
  "true",
  "false",
  "a^b",
  "x,y",
  "a@b",
  "\u0000",
  "null",
  "[]",
];
/** Values for LIKE / STARTSWITH / ENDSWITH: case-folding pairs and pieces of number texts. */
const NEEDLES = [
  "",
  "a",
  "A",
  "OPEN",
  "pen",
  "İ",
  "i̇",
  "ss",
  "SS",
  "ß",
  "σ",
  "Σ",
  "ς",
  "e+",
  "1.0",
  ".",
  "0",
  "1e",
  "00",
  "😀",
  "\uffff",
  "^",
  "TRUE",
  "ru",
  "\u0000",
];
const NUMBERS = [
  0,
  -0,
  1,
  2,
  3,
  7,
  9,
  10,
  -1,
  -2.5,
  0.5,
  0.1 + 0.2,
  1000,
  1e21,
  1e-7,
  5e-324,
  2 ** 53 + 2,
  2 ** 62,
  2 ** 62 + 1024,
  -(2 ** 63),
  1.7976931348623157e308,
];

const str = fc.constantFrom(...STRINGS);
const num = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NUMBERS) },
  { weight: 2, arbitrary: fc.integer({ min: -5, max: 12 }) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
);
const scalar: fc.Arbitrary<Scalar> = fc.oneof(str, num, fc.boolean());
const instantMs = fc
  .integer({ min: Date.parse("2024-04-28T00:00:00Z") / 1000, max: Date.parse("2024-05-06T00:00:00Z") / 1000 })
  .map((s) => s * 1000);
const canonical = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

export const doc: fc.Arbitrary<Metadata> = fc.record(
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

const FIELDS = [
  "sys_id",
  "status",
  "prev_status",
  "type",
  "priority",
  "flag",
  "created",
  "n",
  "s",
  "mix",
  "tags",
  "words",
  "missing",
  "a.b",
];
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
        fc
          .integer({ min: -3, max: 6 })
          .chain((n) =>
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

export const condition: fc.Arbitrary<string> = field.chain((f) =>
  fc.oneof(
    fc.tuple(fc.constantFrom("=", "!=", "<", "<=", ">", ">="), valueFor(f)).map(([op, v]) => `${f}${op}${escape(v)}`),
    fc
      .tuple(fc.constantFrom("IN", "NOT IN"), fc.array(listItem(f), { minLength: 1, maxLength: 4 }))
      .map(([op, vs]) => `${f}${op}${vs.map(escape).join(",")}`),
    fc
      .tuple(fc.constantFrom("LIKE", "NOT LIKE", "NOTLIKE", "STARTSWITH", "ENDSWITH"), fc.oneof(str, fc.constantFrom(...NEEDLES)))
      .map(([op, v]) => `${f}${op}${escape(v)}`),
    fc.tuple(bound(f), bound(f)).map(([lo, hi]) => `${f}BETWEEN${escape(lo)}@${escape(hi)}`),
    fc.constantFrom("ISEMPTY", "ISNOTEMPTY", "ANYTHING", "=", "!=").map((op) => `${f}${op}`),
    fc.tuple(fc.constantFrom("SAMEAS", "NSAMEAS"), field).map(([op, other]) => `${f}${op}${other}`),
  ),
);

const join = <T>(arb: fc.Arbitrary<T[]>, sep: string) => arb.map((xs) => xs.join(sep));
const group = join(fc.array(join(fc.array(condition, { minLength: 1, maxLength: 2 }), "^OR"), { minLength: 1, maxLength: 3 }), "^");
const orderTerm = fc.tuple(fc.boolean(), field).map(([desc, f]) => `ORDERBY${desc ? "DESC" : ""}${f}`);

export const filterText: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(
      { weight: 1, arbitrary: fc.constant([] as string[]) },
      { weight: 6, arbitrary: fc.array(group, { minLength: 1, maxLength: 3 }) },
    ),
    fc.array(orderTerm, { maxLength: 2 }),
    fc.boolean(),
  )
  .map(
    ([groups, order, eq]) => [[...groups].join("^NQ"), ...order].filter((s) => s !== "").join("^") + (eq && groups.length > 0 ? "^EQ" : ""),
  );

/** The ids of a page as the reference gives it: documents `filter` keeps, in its ORDERBY order, ties by id. */
export function referencePage(docs: readonly Metadata[], ids: readonly string[], filter: Filter, offset: number, limit: number): string[] {
  return docs
    .map((d, i) => ({ d, id: ids[i]! }))
    .filter(({ d }) => evaluate(filter, d))
    .sort((a, b) => compareForOrder(a.d, b.d, filter.orderBy) || compareCodePoints(a.id, b.id))
    .slice(offset, offset + limit)
    .map(({ id }) => id);
}

/** 20 to 40 documents, each one the API accepts (parseMetadata throws on any other). */
export const docBatch = fc.array(doc, { minLength: 20, maxLength: 40 }).map((docs) => {
  for (const d of docs) parseMetadata(d);
  return docs;
});

/** Ten filters, to run on one batch of documents. */
export const tenFilters = fc.array(filterText, { minLength: 10, maxLength: 10 });

/**
 * Indexes document i of `docs` in collection "c" as id `d<i>` (three digits, so ids sort as
 * the documents do) with one chunk `row <i>`; returns the ids in order.
 */
export async function indexAsRows(index: Pick<SearchIndex, "indexDocuments">, docs: readonly Metadata[]): Promise<string[]> {
  const ids = docs.map((_, i) => `d${String(i).padStart(3, "0")}`);
  await index.indexDocuments(
    docs.map((metadata, i) => ({
      doc: { collection: "c", docId: ids[i]!, version: 1, metadata, text: `row ${i}` },
      chunks: [{ index: 0, text: `row ${i}`, start: 0, end: `row ${i}`.length }],
    })),
  );
  return ids;
}
