import type { OrderTerm } from "./ast.ts";
import { ORDER_RANKS } from "./order.ts";
import { jsonPath } from "./sql-fragment.ts";

/**
 * ORDER BY terms with the meaning of compareForOrder (order.ts): each field gives a rank term
 * (type order, missing last) and a value term. An array sorts by its first item, reached with
 * the path `$."f"[0]`, which is NULL for a scalar, so `coalesce(item, whole)` picks the right
 * one; an empty array falls through to type 'array', which ranks as missing.
 */
export function compileOrderBy(terms: readonly OrderTerm[], column: string): { terms: string[]; params: unknown[] } {
  const sql: string[] = [];
  const params: unknown[] = [];
  for (const term of terms) {
    const path = jsonPath(term.field);
    const first = `${path}[0]`;
    const type = `coalesce(json_type(${column}, ?), json_type(${column}, ?))`;
    const r = term.descending ? ORDER_RANKS.desc : ORDER_RANKS.asc;
    sql.push(
      `CASE ${type} WHEN 'integer' THEN ${r.number} WHEN 'real' THEN ${r.number} WHEN 'text' THEN ${r.string} ` +
        `WHEN 'true' THEN ${r.boolean} WHEN 'false' THEN ${r.boolean} ELSE ${r.missing} END ASC`,
      // Only the ranked kinds get a value, so everything missing ties.
      `CASE WHEN ${type} IN ('integer', 'real', 'text', 'true', 'false') ` +
        `THEN coalesce(json_extract(${column}, ?), json_extract(${column}, ?)) END ${term.descending ? "DESC" : "ASC"}`,
    );
    params.push(first, path, first, path, first, path);
  }
  return { terms: sql, params };
}
