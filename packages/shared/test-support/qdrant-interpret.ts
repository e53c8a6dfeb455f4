/**
 * Test support: Qdrant's filter semantics in JS, to check the filter compiler against the
 * reference evaluator and to run the in-memory stand-in (qdrant-fake.ts). Written from
 * Qdrant's documentation and its condition checker (lib/segment: query_checker.rs,
 * condition_checker.rs):
 *
 * - a filter holds when all of `must`, none of `must_not`, one of `should` (an empty `should`
 *   list holds for nothing) and `min_should.min_count` of its conditions hold;
 * - a field condition reads the values at its key (dots go into objects); a missing key has
 *   none, and then only a `values_count` admitting 0 holds; a value that is an array is
 *   checked item by item (any item), except by `values_count`, which counts its items;
 * - `match.value` and `match.any` are typed: strings match strings, integers numbers holding
 *   an integer, booleans booleans; `match.except` as in Qdrant's checker;
 * - `range` with number bounds compares numbers as doubles; with string bounds it compares
 *   RFC 3339 instants and ignores values that are not one;
 * - `is_empty`: no value, or only nulls and empty arrays; `is_null`: some value is null.
 *
 * Anything else (geo, text match, has_id...) is refused, so a request the compiler builds
 * outside this subset fails the tests instead of passing unchecked.
 */
import type { Schemas } from "@qdrant/js-client-rest";

type Json = unknown;
type Condition = Schemas["Condition"];

export function matchesFilter(filter: Schemas["Filter"], payload: Record<string, Json>): boolean {
  const list = (x: unknown): Condition[] | null => (x === undefined || x === null ? null : Array.isArray(x) ? x : [x as Condition]);
  const check = (c: Condition) => matchesCondition(c, payload);
  const should = list(filter.should);
  const must = list(filter.must);
  const mustNot = list(filter.must_not);
  const minShould = filter.min_should as Schemas["MinShould"] | null | undefined;
  return (
    (should === null || should.some(check)) &&
    (minShould == null || minShould.conditions.filter(check).length >= minShould.min_count) &&
    (must === null || must.every(check)) &&
    (mustNot === null || !mustNot.some(check))
  );
}

function matchesCondition(c: Condition, payload: Record<string, Json>): boolean {
  if ("key" in c) return matchesField(c, valuesAt(payload, c.key));
  if ("is_empty" in c) return valuesAt(payload, c.is_empty.key).every((v) => v === null || (Array.isArray(v) && v.length === 0));
  if ("is_null" in c) return valuesAt(payload, c.is_null.key).some((v) => v === null);
  const keys = Object.keys(c);
  if (keys.every((k) => ["must", "should", "must_not", "min_should"].includes(k))) return matchesFilter(c as Schemas["Filter"], payload);
  throw new Error(`condition outside the supported subset: ${JSON.stringify(c)}`);
}

export function valuesAt(payload: Record<string, Json>, key: string): Json[] {
  let value: Json = payload;
  for (const part of key.split(".")) {
    if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.hasOwn(value, part)) return [];
    value = (value as Record<string, Json>)[part];
  }
  return [value];
}

type Field = Schemas["FieldCondition"];

function matchesField(c: Field, values: Json[]): boolean {
  const used = (["match", "range", "values_count"] as const).filter((k) => c[k] !== undefined && c[k] !== null);
  const others = Object.keys(c).filter((k) => k !== "key" && !used.includes(k as (typeof used)[number]));
  if (used.length !== 1 || others.length > 0) throw new Error(`field condition outside the supported subset: ${JSON.stringify(c)}`);
  if (c.values_count) {
    const count = c.values_count as Schemas["ValuesCount"];
    const n = values.length === 0 ? 0 : values.reduce<number>((s, v) => s + (Array.isArray(v) ? v.length : 1), 0);
    return inRange(n, count);
  }
  const one = (x: Json) => (c.match ? matchValue(c.match as Schemas["Match"], x) : matchRange(c.range as Schemas["RangeInterface"], x));
  return values.some((v) => (Array.isArray(v) ? v.some(one) : one(v)));
}

function matchValue(m: Schemas["Match"], x: Json): boolean {
  const isInt = (v: Json): v is number => typeof v === "number" && Number.isInteger(v);
  if ("value" in m) {
    const want = m.value;
    if (typeof want === "number" && !Number.isInteger(want)) throw new Error(`match.value takes no float: ${want}`);
    return typeof want === "number" ? isInt(x) && x === want : x === want;
  }
  if ("any" in m) return checkList(m.any, x, true);
  if ("except" in m) {
    if (typeof x === "string" || isInt(x)) return typeof x === typeof m.except[0] ? !checkList(m.except, x, false) : true;
    return x !== null;
  }
  throw new Error(`match outside the supported subset: ${JSON.stringify(m)}`);
}

function checkList(list: readonly (string | number)[], x: Json, typed: boolean): boolean {
  if (list.length === 0) throw new Error("match.any / match.except with an empty list");
  if (!list.every((v) => typeof v === typeof list[0])) throw new Error("match list mixes strings and numbers");
  if (typeof list[0] === "number" && !list.every((v) => Number.isInteger(v))) throw new Error("match list takes integers only");
  const ok = typeof list[0] === "string" ? typeof x === "string" : typeof x === "number" && Number.isInteger(x);
  return (ok || !typed) && (list as Json[]).includes(x);
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

function matchRange(r: Schemas["RangeInterface"], x: Json): boolean {
  const bounds = Object.entries(r).filter(([, v]) => v !== null && v !== undefined);
  if (bounds.length === 0 || bounds.some(([k]) => !["lt", "lte", "gt", "gte"].includes(k)))
    throw new Error(`bad range ${JSON.stringify(r)}`);
  const dated = bounds.every(([, v]) => typeof v === "string");
  if (!dated && !bounds.every(([, v]) => typeof v === "number")) throw new Error(`range mixes numbers and dates: ${JSON.stringify(r)}`);
  if (!dated) return typeof x === "number" && inRange(x, r as Schemas["Range"]);
  const instant = (s: string) => {
    if (!RFC3339.test(s)) throw new Error(`not an RFC 3339 instant: ${s}`);
    return Date.parse(s);
  };
  if (typeof x !== "string" || !RFC3339.test(x)) return false;
  const at = Date.parse(x);
  return inRange(at, Object.fromEntries(bounds.map(([k, v]) => [k, instant(v as string)])));
}

function inRange(n: number, r: { lt?: number | null; lte?: number | null; gt?: number | null; gte?: number | null }): boolean {
  return (r.lt == null || n < r.lt) && (r.lte == null || n <= r.lte) && (r.gt == null || n > r.gt) && (r.gte == null || n >= r.gte);
}
