/**
 * Filter values that parse, and so keep their meaning (docs/filters.md), but probably do not say
 * what was meant. The API returns these as `warnings` beside the answer, never as errors:
 *   - a value that starts with an operator character: `status==open` compares with "=open";
 *   - a value that ends with `^`: `status=open^^` compares with "open^" (`^^` is a literal `^`);
 *   - a value holding a condition after a literal `^` or after `&`: `status=open^^priority=2`
 *     and `status=open&priority=2` compare status with all of "open^priority=2", "open&priority=2";
 *   - a field that no document of the searched collections has (typically a misspelling).
 */
import { valueTexts, type Filter } from "./ast.ts";
import { closestName } from "../domain/suggest.ts";
import { quote } from "./values.ts";

const OPERATOR_START = /^[=!<>]/;
/** `^` or `&` then what reads as the start of a condition: a field name and an operator. */
const JOINED_CONDITION =
  /([&^])[a-z_][a-z0-9_.]*(?:[=!<>]|NOT ?IN|NOT ?LIKE|IN|LIKE|STARTSWITH|ENDSWITH|BETWEEN|ISEMPTY|ISNOTEMPTY|ANYTHING|N?SAMEAS)/;

/**
 * What looks wrong in `filter`, one message each, in the order written. `fields` are the
 * metadata keys present in the searched collections (a superset is fine: a key missing from
 * it is on no document); null skips that check.
 */
export function filterTypos(filter: Filter, fields: ReadonlySet<string> | null): string[] {
  const warnings: string[] = [];
  const named = new Set<string>();
  for (const group of filter.groups) {
    for (const clause of group) {
      for (const c of clause) {
        named.add(c.field);
        if (c.op === "SAMEAS" || c.op === "NSAMEAS") named.add(c.other);
        for (const value of valueTexts(c)) {
          if (OPERATOR_START.test(value)) {
            const meant =
              c.op === "=" || c.op === "!=" || c.op === "<" || c.op === ">" || c.op === "<=" || c.op === ">="
                ? `${c.field}${c.op}${value.replace(/^=+/, "")}`
                : undefined;
            warnings.push(
              `${c.field}: the value ${quote(value)} starts with ${quote(value.charAt(0))}, an operator character, and is compared as written` +
                (meant && value.startsWith("=") ? `; to compare with ${quote(value.replace(/^=+/, ""))}, write ${meant}` : ""),
            );
          }
          if (value.endsWith("^")) {
            warnings.push(
              `${c.field}: the value ${quote(value)} ends with "^" because "^^" in a value is a literal "^"; to join two conditions, write one "^" between them`,
            );
          }
          const joined = JOINED_CONDITION.exec(value);
          if (joined) {
            const sep = joined[1];
            const why = sep === "^" ? `"^^" in a value is a literal "^"` : `"&" joins nothing in a filter`;
            warnings.push(
              `${c.field}: the value ${quote(value)} holds ${quote(value.slice(joined.index))} because ${why}, so ${c.field} is compared with all of it, not with ${quote(value.slice(0, joined.index))}; ` +
                `to join two conditions, write one "^" between them`,
            );
          }
        }
      }
    }
  }
  for (const term of filter.orderBy) named.add(term.field);
  if (fields !== null) {
    for (const field of named) {
      if (fields.has(field)) continue;
      const meant = closestName(field, fields);
      warnings.push(`${field}: no document in the searched collections has this field${meant ? `; did you mean ${meant}?` : ""}`);
    }
  }
  return warnings;
}
