import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FilterSyntaxError } from "../errors.ts";
import { evaluate } from "./evaluate.ts";
import type { Filter } from "./ast.ts";
import { parseFilter } from "./parse.ts";
import { OPERATOR_TOKENS } from "./condition.ts";
import { compileToLanceWhere } from "./lancedb.ts";
import { compileFilter } from "./qdrant.ts";

const NOW = new Date("2024-06-15T12:00:00Z");

/** Pieces of the language, so random strings often get deep into the parser. */
const TOKENS = [
  "^",
  "^^",
  "^OR",
  "^NQ",
  "^EQ",
  "ORDERBY",
  "ORDERBYDESC",
  "OR",
  "NQ",
  "EQ",
  ...OPERATOR_TOKENS,
  "NOT",
  "IS",
  "status",
  "priority",
  "flag",
  "created",
  "type",
  "sys_id",
  "tags",
  "a.b",
  "x",
  "_",
  "1",
  "-2",
  "1.5e3",
  ".",
  "true",
  "false",
  "2024-05-01",
  "2024-05-01T10:00:00Z",
  "2024-05-01 10:00:00",
  "+02:00",
  "T",
  "Z",
  "javascript:",
  "gs.daysAgo(",
  "gs.endOfToday()",
  "javascript:gs.daysAgo(3)",
  "(",
  ")",
  ",",
  "@",
  " ",
  "é",
  "😀",
  "\ud800",
  "\u0000",
  "'",
  '"',
  "?",
  "%",
  "$",
  "\\",
];

const tokenString = fc.array(fc.constantFrom(...TOKENS), { maxLength: 14 }).map((parts) => parts.join(""));
const SEPARATORS = ["^", "^OR", "^NQ", "^ORDERBY", "^ORDERBYDESC", "^EQ", "^^"];
/** Mostly well-formed conditions with arbitrary values, so typed-value parsing sees odd input. */
const nearValid = fc
  .array(
    fc.tuple(
      fc.constantFrom("priority", "flag", "created", "status", "n", "a.b"),
      fc.constantFrom(...OPERATOR_TOKENS),
      fc.string({ unit: "grapheme", maxLength: 12 }),
      fc.constantFrom(...SEPARATORS),
    ),
    { minLength: 1, maxLength: 5 },
  )
  .map((parts) =>
    parts
      .map(([f, op, v, sep]) => `${f}${op}${v}${sep}`)
      .join("")
      .replace(/\^[A-Z]*$/, ""),
  );
const anyString = fc.oneof(fc.string({ unit: "binary", maxLength: 40 }), fc.string({ unit: "grapheme-ascii", maxLength: 40 }));

/** Parses; on success the filter must also evaluate and compile for every index without error. */
function check(input: string): void {
  let filter: Filter;
  try {
    filter = parseFilter(input, NOW);
  } catch (err) {
    if (!(err instanceof FilterSyntaxError)) throw err;
    expect(err.position).toBeGreaterThanOrEqual(0);
    expect(err.position).toBeLessThanOrEqual(input.length);
    return;
  }
  evaluate(filter, { status: "open", tags: ["a"] });
  compileToLanceWhere(filter);
  compileFilter(filter);
}

describe("parseFilter never throws anything but FilterSyntaxError", () => {
  it("on arbitrary strings", () => {
    fc.assert(fc.property(anyString, check), { numRuns: 3000 });
  });

  it("on strings made of the language's tokens", () => {
    fc.assert(fc.property(tokenString, check), { numRuns: 5000 });
  });

  it("on conditions with arbitrary values", () => {
    fc.assert(fc.property(nearValid, check), { numRuns: 3000 });
  });
});
