import { FilterSyntaxError } from "../errors.ts";
import type { Condition, Filter, OrderTerm } from "./ast.ts";
import { parseCondition } from "./condition.ts";
import { checkFieldName, describeAt, scanField } from "./scan.ts";

/**
 * Bounds the SQL a filter compiles to: at worst one bound parameter per character (a long
 * numeric IN list), so under SQLite's limit of 32766. The API may cap filters lower.
 */
export const MAX_FILTER_LENGTH = 16_384;

type Separator = "and" | "or" | "nq" | "eq";
const ORDER_KEYWORDS = ["ORDERBYDESC", "ORDERBY"] as const;

/**
 * Parses a filter (docs/filters.md). Throws only FilterSyntaxError, whose position is the 0-based
 * offset of the problem. `now` resolves relative dates such as `javascript:gs.daysAgo(7)`.
 */
export function parseFilter(input: string, now: Date = new Date()): Filter {
  checkText(input);
  const groups: Condition[][][] = [];
  const orderBy: OrderTerm[] = [];
  if (input === "") return { groups, orderBy };
  let group: Condition[][] = [];
  let previous: Exclude<Separator, "eq"> | "start" = "start";
  let previousAt = 0;
  let pos = 0;
  for (;;) {
    checkTermStart(input, pos, previous, previousAt);
    const keyword = ORDER_KEYWORDS.find((k) => input.startsWith(k, pos));
    if (keyword !== undefined && previous === "or") {
      throw new FilterSyntaxError(`^OR must be followed by a condition, not ${keyword}`, pos);
    }
    if (keyword !== undefined) {
      const term = parseOrderTerm(input, pos, keyword);
      orderBy.push(term.term);
      pos = term.end;
    } else {
      const { condition, end } = parseCondition(input, pos, now);
      const clause = previous === "or" ? group.at(-1) : undefined;
      if (clause) clause.push(condition);
      else group.push([condition]);
      pos = end;
    }
    if (pos === input.length) break;
    const separator = readSeparator(input, pos);
    if (separator.kind === "eq") {
      if (separator.end !== input.length) throw new FilterSyntaxError("^EQ is only allowed at the end of the filter", pos);
      break;
    }
    if (separator.kind === "or" && keyword !== undefined) {
      throw new FilterSyntaxError(`^OR must follow a condition, not ${keyword}`, pos);
    }
    if (separator.kind === "nq") {
      if (group.length > 0) groups.push(group);
      group = [];
    }
    previous = separator.kind;
    previousAt = pos;
    pos = separator.end;
  }
  if (group.length > 0) groups.push(group);
  return { groups, orderBy };
}

function checkText(input: string): void {
  if (input.length > MAX_FILTER_LENGTH) {
    throw new FilterSyntaxError(`filter longer than ${MAX_FILTER_LENGTH} characters`, MAX_FILTER_LENGTH);
  }
  // An unpaired surrogate cannot be sent to SQLite or Qdrant as UTF-8 unchanged.
  // With the u flag a surrogate pair is one code point, so only an unpaired half matches.
  const surrogate = input.search(/\p{Surrogate}/u);
  if (surrogate >= 0) throw new FilterSyntaxError("invalid Unicode: unpaired surrogate", surrogate);
}

/** A term must start here: report what is missing given the separator before it. */
function checkTermStart(input: string, pos: number, previous: Exclude<Separator, "eq"> | "start", previousAt: number): void {
  const atEnd = pos === input.length;
  if (!atEnd && input.charAt(pos) !== "^") return;
  switch (previous) {
    case "start":
      throw new FilterSyntaxError("leading ^: the filter must start with a condition", 0);
    case "and":
      if (atEnd) throw new FilterSyntaxError("trailing ^: expected a condition after it", previousAt);
      throw new FilterSyntaxError("empty condition between two ^", pos);
    case "or":
      throw new FilterSyntaxError("dangling ^OR: expected a condition after it", previousAt);
    case "nq":
      throw new FilterSyntaxError("empty ^NQ group: expected a condition after ^NQ", previousAt);
  }
}

/** After a `^`, the longest of ORDERBYDESC, ORDERBY, OR, NQ, EQ wins; else it is AND. */
function readSeparator(input: string, pos: number): { kind: Separator; end: number } {
  const next = pos + 1;
  if (ORDER_KEYWORDS.some((k) => input.startsWith(k, next))) return { kind: "and", end: next };
  if (input.startsWith("OR", next)) return { kind: "or", end: next + 2 };
  if (input.startsWith("NQ", next)) return { kind: "nq", end: next + 2 };
  if (input.startsWith("EQ", next)) return { kind: "eq", end: next + 2 };
  return { kind: "and", end: next };
}

function parseOrderTerm(input: string, pos: number, keyword: string): { term: OrderTerm; end: number } {
  const fieldStart = pos + keyword.length;
  const end = scanField(input, fieldStart);
  const field = input.slice(fieldStart, end);
  checkFieldName(field, fieldStart, `after ${keyword}`);
  if (end < input.length && input.charAt(end) !== "^") {
    throw new FilterSyntaxError(`unexpected ${describeAt(input, end)} after ${keyword}${field}`, end);
  }
  return { term: { field, descending: keyword === "ORDERBYDESC" }, end };
}
