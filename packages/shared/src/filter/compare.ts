import type { Metadata, Scalar } from "../domain/metadata.ts";
import type { Value } from "./ast.ts";

/**
 * The value semantics shared by the reference evaluator and the reference ordering; the SQL
 * compiler mirrors each function here (see lancedb.ts).
 */

/** The stored elements of a field: none when missing, one for a scalar, each item of an array. */
export function elementsOf(metadata: Metadata, field: string): readonly Scalar[] {
  if (!Object.hasOwn(metadata, field)) return [];
  const value = metadata[field];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** A stored scalar as text: strings as they are, numbers and booleans as their JSON text. */
export function textOf(x: Scalar): string {
  // For finite numbers String() is JSON.stringify() (and -0 gives "0" in both).
  return typeof x === "string" ? x : String(x);
}

/**
 * Order by Unicode code point, which is the byte order of UTF-8 and so SQLite's BINARY
 * collation. JS `<` compares UTF-16 units, which puts U+E000..U+FFFF after the surrogate pairs
 * of U+10000 and up: the wrong way round.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}

/** Sign of stored element vs filter value: numerically when both are numbers, else as text. */
export function compareToValue(x: Scalar, value: Value): number {
  if (typeof x === "number" && value.num !== undefined) return x < value.num ? -1 : x > value.num ? 1 : 0;
  return Math.sign(compareCodePoints(textOf(x), value.text));
}

export function lower(text: string): string {
  return text.toLowerCase();
}

/** Missing, `""` or `[]`. */
export function isEmpty(metadata: Metadata, field: string): boolean {
  if (!Object.hasOwn(metadata, field)) return true;
  const value = metadata[field];
  return value === undefined || value === "" || (Array.isArray(value) && value.length === 0);
}

/** Both present and the same JSON value (same type; arrays item by item). */
export function sameValue(metadata: Metadata, a: string, b: string): boolean {
  if (!Object.hasOwn(metadata, a) || !Object.hasOwn(metadata, b)) return false;
  const x = metadata[a];
  const y = metadata[b];
  if (x === undefined || y === undefined) return false;
  if (Array.isArray(x) || Array.isArray(y)) {
    return Array.isArray(x) && Array.isArray(y) && x.length === y.length && x.every((item, i) => item === y[i]);
  }
  return x === y;
}

/**
 * How a pair of different keys whose values are the same (sameValue) is written in the stored
 * `meta_same` list, in either order: both index adapters write it (LanceDB's column, Qdrant's
 * payload key) and both filter compilers match SAMEAS against it.
 */
export function samePair(a: string, b: string): string {
  return a < b ? `${a}=${b}` : `${b}=${a}`;
}
