/**
 * The reference evaluator: the definition of what a filter means. Every backend (the LanceDB
 * compiler in lancedb.ts, the Qdrant one in qdrant.ts) is tested against it. Where
 * docs/filters.md is silent:
 *
 * - Elements. A missing field has no elements, a scalar one, an array its items. A positive
 *   condition (`=` `<` `<=` `>` `>=` IN LIKE STARTSWITH ENDSWITH BETWEEN) holds when some
 *   element satisfies it; BETWEEN needs one element inside both bounds. So it never holds for
 *   a missing field or `[]`.
 * - Negations. `!=`, `NOT IN`, `NOT LIKE` are exactly NOT of `=`, IN, LIKE: they hold for a
 *   missing field, and `tags!=a` means "no element is a".
 * - Comparing an element with a value. Numerically when the element is a JSON number and the
 *   value has a number (`priority` always; other untyped fields when the value is a finite
 *   decimal like `-1.5e3`; never `sys_id`/`status`/`type`, which are strings). Otherwise as
 *   text, by Unicode code point (= SQLite's BINARY order of UTF-8, not JS UTF-16 order), with
 *   a stored number or boolean turned into its JSON text (`10`, `1e+21`, `true`). Equality is
 *   exact and case-sensitive; `created` values are canonical UTC text, so text order is time
 *   order.
 * - LIKE (contains), STARTSWITH, ENDSWITH compare the element's text with the value as
 *   written, both lower-cased with JS `toLowerCase()` (full Unicode, locale-independent). Their
 *   values are never typed, so `createdSTARTSWITH2024-05` works.
 * - ISEMPTY: missing, `""` or `[]` (so `[""]` is not empty). ISNOTEMPTY is its negation.
 *   `field=` and `field!=` with no value are ISEMPTY and ISNOTEMPTY.
 * - ANYTHING is always true, also for a missing field.
 * - SAMEAS: both fields present and the same JSON value (same type, arrays item by item; 1 is
 *   not "1"). NSAMEAS is its negation.
 * - Dotted field names are plain keys: metadata cannot nest, so `a.b` is always missing.
 */
import type { Metadata, Scalar } from "../domain/metadata.ts";
import type { Condition, Filter, Value } from "./ast.ts";
import { compareToValue, elementsOf, isEmpty, lower, sameValue, textOf } from "./compare.ts";

export function evaluate(filter: Filter, metadata: Metadata): boolean {
  if (filter.groups.length === 0) return true;
  return filter.groups.some((group) => group.every((clause) => clause.some((c) => holds(c, metadata))));
}

function holds(c: Condition, metadata: Metadata): boolean {
  const any = (test: (x: Scalar) => boolean) => elementsOf(metadata, c.field).some(test);
  switch (c.op) {
    case "=":
      return any((x) => compareToValue(x, c.value) === 0);
    case "!=":
      return !any((x) => compareToValue(x, c.value) === 0);
    case "<":
      return any((x) => compareToValue(x, c.value) < 0);
    case "<=":
      return any((x) => compareToValue(x, c.value) <= 0);
    case ">":
      return any((x) => compareToValue(x, c.value) > 0);
    case ">=":
      return any((x) => compareToValue(x, c.value) >= 0);
    case "IN":
      return any((x) => inList(x, c.values));
    case "NOT IN":
      return !any((x) => inList(x, c.values));
    case "LIKE":
      return any((x) => lower(textOf(x)).includes(lower(c.text)));
    case "NOT LIKE":
      return !any((x) => lower(textOf(x)).includes(lower(c.text)));
    case "STARTSWITH":
      return any((x) => lower(textOf(x)).startsWith(lower(c.text)));
    case "ENDSWITH":
      return any((x) => lower(textOf(x)).endsWith(lower(c.text)));
    case "BETWEEN":
      return any((x) => compareToValue(x, c.low) >= 0 && compareToValue(x, c.high) <= 0);
    case "ISEMPTY":
      return isEmpty(metadata, c.field);
    case "ISNOTEMPTY":
      return !isEmpty(metadata, c.field);
    case "ANYTHING":
      return true;
    case "SAMEAS":
      return sameValue(metadata, c.field, c.other);
    case "NSAMEAS":
      return !sameValue(metadata, c.field, c.other);
  }
}

function inList(x: Scalar, values: readonly Value[]): boolean {
  return values.some((v) => compareToValue(x, v) === 0);
}
