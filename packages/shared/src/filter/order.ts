/**
 * The reference ordering for ORDERBY / ORDERBYDESC. The indexes sort with this function, so
 * every backend orders alike.
 *
 * A field sorts by its value, or by its first item when it is an array. Values of different
 * types sort numbers, then strings, then booleans (ascending; ORDERBYDESC reverses that, so
 * booleans come first). Within a type: numerically, by Unicode code point, false before true.
 * A missing field or an empty array sorts last in both directions. Later terms break ties;
 * full ties are left to the caller (e.g. by id).
 */
import type { Metadata, Scalar } from "../domain/metadata.ts";
import type { OrderTerm } from "./ast.ts";
import { compareCodePoints } from "./compare.ts";

/** Rank of each kind for ascending and for descending order; missing is last in both. */
export const ORDER_RANKS = {
  asc: { number: 0, string: 1, boolean: 2, missing: 3 },
  desc: { number: 2, string: 1, boolean: 0, missing: 3 },
} as const;

type Kind = keyof (typeof ORDER_RANKS)["asc"];

export function compareForOrder(a: Metadata, b: Metadata, orderBy: readonly OrderTerm[]): number {
  for (const term of orderBy) {
    const c = compareTerm(sortValue(a, term.field), sortValue(b, term.field), term.descending);
    if (c !== 0) return c;
  }
  return 0;
}

function compareTerm(x: Scalar | undefined, y: Scalar | undefined, descending: boolean): number {
  const ranks = descending ? ORDER_RANKS.desc : ORDER_RANKS.asc;
  const kx = kindOf(x);
  const ky = kindOf(y);
  if (kx !== ky) return ranks[kx] - ranks[ky];
  if (x === undefined || y === undefined) return 0;
  const c = compareSameKind(x, y);
  return descending ? -c : c;
}

function compareSameKind(x: Scalar, y: Scalar): number {
  if (typeof x === "string" && typeof y === "string") return Math.sign(compareCodePoints(x, y));
  // Numbers, or booleans (false < true as 0 < 1).
  return Number(x) < Number(y) ? -1 : Number(x) > Number(y) ? 1 : 0;
}

function kindOf(x: Scalar | undefined): Kind {
  if (x === undefined) return "missing";
  return typeof x === "number" ? "number" : typeof x === "string" ? "string" : "boolean";
}

function sortValue(metadata: Metadata, field: string): Scalar | undefined {
  if (!Object.hasOwn(metadata, field)) return undefined;
  const value = metadata[field];
  return Array.isArray(value) ? value[0] : value;
}
