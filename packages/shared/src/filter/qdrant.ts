/**
 * Compiles a filter to a Qdrant filter condition over the payload of schema.ts. The result
 * holds every point the reference evaluator accepts; `exact` says it holds no other. When it
 * is not exact the caller post-filters with `evaluate` (search-index.ts).
 *
 * Qdrant's semantics this relies on (its condition checker): a field condition holds when
 * some stored value satisfies it (array items one by one), never for a missing field; `match`
 * is typed (a string matches strings, an integer integers, a boolean booleans); `range`
 * compares stored numbers as doubles and ignores other values; with string bounds it compares
 * RFC 3339 instants; `is_empty` holds for a missing field, null or []; `must_not` holds when
 * the condition does not, so for a missing field too: exactly docs/filters.md's negations.
 *
 * Each condition compiles to two Qdrant conditions, a superset `sup` and a subset `sub` of what
 * it accepts (equal when exact). AND and OR combine them part by part; NOT swaps them (the
 * negation of a subset is a superset), so a condition dropped to "match all" never ends up
 * under `must_not`. `true` / `false` stand for match all / match nothing and are folded away.
 *
 * Exact: equality and IN on any field; ranges on `priority` (integer index) and `created`
 * (canonical instants, datetime index); every operator on `flag` (two possible values);
 * ISEMPTY, SAMEAS and their negations (through the derived lists `meta_blank`, `meta_keys`,
 * `meta_same`); ANYTHING; any condition on a dotted field (always missing). Not exact:
 * LIKE / STARTSWITH / ENDSWITH (case-insensitive substrings; their superset is "has a value")
 * and NOT LIKE (match all), and `<` `<=` `>` `>=` BETWEEN on strings and on untyped fields,
 * which may compare stored strings alphabetically ("has a value").
 */
import type { Schemas } from "@qdrant/js-client-rest";
import type { Condition, Filter, Value } from "./ast.ts";
import { boundsOver, holdsFor, type Bounds as SharedBounds } from "./bounds.ts";
import { knownFieldType } from "./values.ts";
import { KEY, metadataKey, samePair } from "./qdrant-payload.ts";

export type QdrantCondition = Schemas["Condition"];
/** A compiled condition: `true` matches every point, `false` none. */
export type Compiled = QdrantCondition | boolean;

export interface CompiledFilter {
  condition: Compiled;
  exact: boolean;
}

type Bounds = SharedBounds<QdrantCondition>;

export function and(items: readonly Compiled[]): Compiled {
  if (items.includes(false)) return false;
  const rest = items.filter((q): q is QdrantCondition => q !== true);
  return rest.length === 0 ? true : rest.length === 1 ? rest[0]! : { must: rest };
}

export function or(items: readonly Compiled[]): Compiled {
  if (items.includes(true)) return true;
  const rest = items.filter((q): q is QdrantCondition => q !== false);
  return rest.length === 0 ? false : rest.length === 1 ? rest[0]! : { should: rest };
}

export function not(q: Compiled): Compiled {
  if (typeof q === "boolean") return !q;
  // NOT (NOT x) is x: keeps negated negations (`!=` of ISNOTEMPTY...) one level deep.
  if (Object.keys(q).length === 1 && "must_not" in q && Array.isArray(q.must_not) && q.must_not.length === 1) {
    return q.must_not[0]!;
  }
  return { must_not: [q] };
}

const { exactly, loosely, foldCommon, compile } = boundsOver<QdrantCondition>({ and, or, not });

export function compileFilter(filter: Filter): CompiledFilter {
  const b = compile(filter, condition);
  return { condition: b.sup, exact: b.exact };
}

const match = (key: string, value: string | number | boolean): QdrantCondition => ({ key, match: { value } });
const matchAny = (key: string, values: readonly string[] | readonly number[]): QdrantCondition =>
  values.length === 1 ? match(key, values[0]!) : { key, match: { any: [...values] as string[] | number[] } };
const isEmpty = (key: string): QdrantCondition => ({ is_empty: { key } });
const hasValue = (field: string) => not(isEmpty(metadataKey(field)));

function condition(c: Condition): Bounds {
  const common = foldCommon(c, condition);
  if (common) return common;
  switch (c.op) {
    case "ISEMPTY":
      return exactly(or([isEmpty(metadataKey(c.field)), match(KEY.metaBlank, c.field)]));
    case "SAMEAS":
      return exactly(c.field === c.other ? match(KEY.metaKeys, c.field) : match(KEY.metaSame, samePair(c.field, c.other)));
  }
  const key = metadataKey(c.field);
  const type = knownFieldType(c.field);
  if (type === "boolean") {
    // Stored values are booleans: keep those the condition accepts.
    return exactly(or([true, false].filter((b) => holdsFor(c, { [c.field]: b })).map((b) => match(key, b))));
  }
  switch (c.op) {
    case "=":
      return exactly(equalTo(key, type, [c.value]));
    case "IN":
      return exactly(equalTo(key, type, c.values));
    case "LIKE":
    case "STARTSWITH":
    case "ENDSWITH":
      // Every value contains, starts and ends with "".
      return c.text === "" ? exactly(hasValue(c.field)) : loosely(hasValue(c.field));
    case "<":
    case "<=":
    case ">":
    case ">=":
      return ranged(c.field, { [RANGE[c.op]]: c.value });
    case "BETWEEN":
      return ranged(c.field, { gte: c.low, lte: c.high });
  }
  throw new Error(`no Qdrant condition for ${c.op}`); // negated operators were handled above
}

const RANGE = { "<": "lt", "<=": "lte", ">": "gt", ">=": "gte" } as const;

/** Stored elements equal to one of the values, as the evaluator's `compareToValue(...) === 0`. */
function equalTo(key: string, type: ReturnType<typeof knownFieldType>, values: readonly Value[]): Compiled {
  const texts = [...new Set(values.map((v) => v.text))];
  switch (type) {
    case "string":
      return matchAny(key, texts);
    case "integer":
      return matchAny(key, [...new Set(values.map((v) => v.num!))]);
    case "instant":
      return or(texts.map((t) => ({ key, range: { gte: t, lte: t } })));
    default: {
      // Untyped: a stored string equals the text; a stored number equals the number (as
      // doubles, so a range, not an integer match); a stored boolean equals "true" / "false".
      const nums = [...new Set(values.flatMap((v) => (v.num === undefined ? [] : [v.num])))];
      const bools = texts.filter((t) => t === "true" || t === "false");
      return or([
        matchAny(key, texts),
        ...nums.map((n) => ({ key, range: { gte: n, lte: n } })),
        ...bools.map((b) => match(key, b === "true")),
      ]);
    }
  }
}

type Range = Partial<Record<"lt" | "lte" | "gt" | "gte", Value>>;

function ranged(field: string, range: Range): Bounds {
  const key = metadataKey(field);
  const bounds = Object.entries(range) as [keyof Range, Value][];
  switch (knownFieldType(field)) {
    case "integer":
      return exactly({ key, range: Object.fromEntries(bounds.map(([op, v]) => [op, v.num!])) });
    case "instant":
      // Stored values and bounds are canonical UTC instants: time order is their text order.
      return exactly({ key, range: Object.fromEntries(bounds.map(([op, v]) => [op, v.text])) });
    default:
      return loosely(hasValue(field));
  }
}
