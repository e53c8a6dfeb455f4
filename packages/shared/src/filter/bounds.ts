/**
 * What the index compilers share: a condition compiled for an engine as two bounds, a superset
 * (`sup`: every match passes it) and a subset (`sub`: what passes it matches), equal when the
 * engine can express the condition exactly. Conditions combine through the filter's structure
 * (`^OR`, then `^`, then `^NQ`) with the engine's own AND, OR and NOT; an inexact result is
 * finished with the reference evaluator (filter/evaluate.ts). `true` matches everything, `false`
 * nothing.
 */
import type { Metadata } from "../domain/metadata.ts";
import { positiveOf, type Condition, type Filter } from "./ast.ts";
import { evaluate } from "./evaluate.ts";

export interface Bounds<Q> {
  sup: Q | boolean;
  sub: Q | boolean;
  exact: boolean;
}

export interface Connectives<Q> {
  and(items: readonly (Q | boolean)[]): Q | boolean;
  or(items: readonly (Q | boolean)[]): Q | boolean;
  not(q: Q | boolean): Q | boolean;
}

export const exactly = <Q>(q: Q | boolean): Bounds<Q> => ({ sup: q, sub: q, exact: true });
export const loosely = <Q>(sup: Q | boolean, sub: Q | boolean = false): Bounds<Q> => ({ sup, sub, exact: false });

/** Whether one condition holds for one stored metadata object (for constant folding). */
export const holdsFor = (c: Condition, metadata: Metadata): boolean => evaluate({ groups: [[[c]]], orderBy: [] }, metadata);

/** NOT swaps the bounds: what surely matches becomes what surely does not. */
export function negate<Q>(b: Bounds<Q>, ops: Connectives<Q>): Bounds<Q> {
  return b.exact ? exactly(ops.not(b.sup)) : { sup: ops.not(b.sub), sub: ops.not(b.sup), exact: false };
}

/**
 * The steps every engine takes first: a condition on a dotted field (always missing), or
 * comparing with one, answers the same for every document; a negative operator is the negation
 * of its positive one; ANYTHING matches everything. `undefined` leaves the rest to the engine.
 */
export function foldCommon<Q>(c: Condition, condition: (c: Condition) => Bounds<Q>, ops: Connectives<Q>): Bounds<Q> | undefined {
  if (c.field.includes(".") || ((c.op === "SAMEAS" || c.op === "NSAMEAS") && c.other.includes("."))) return exactly<Q>(holdsFor(c, {}));
  const positive = positiveOf(c);
  if (positive) return negate(condition(positive), ops);
  return c.op === "ANYTHING" ? exactly<Q>(true) : undefined;
}

function combine<Q>(parts: readonly Bounds<Q>[], op: (items: readonly (Q | boolean)[]) => Q | boolean): Bounds<Q> {
  const sup = op(parts.map((p) => p.sup));
  if (parts.every((p) => p.exact)) return exactly(sup);
  const sub = op(parts.map((p) => p.sub));
  return { sup, sub, exact: typeof sup === "boolean" && sup === sub };
}

/** The bounds of a whole filter, from the bounds of each condition. */
export function compileBounds<Q>(filter: Filter, condition: (c: Condition) => Bounds<Q>, ops: Connectives<Q>): Bounds<Q> {
  if (filter.groups.length === 0) return exactly<Q>(true);
  return combine(
    filter.groups.map((group) =>
      combine(
        group.map((clause) => combine(clause.map(condition), ops.or)),
        ops.and,
      ),
    ),
    ops.or,
  );
}

/** The functions above, bound to one engine's query type and connectives. */
export interface EngineBounds<Q> {
  exactly(q: Q | boolean): Bounds<Q>;
  loosely(sup: Q | boolean, sub?: Q | boolean): Bounds<Q>;
  negate(b: Bounds<Q>): Bounds<Q>;
  foldCommon(c: Condition, condition: (c: Condition) => Bounds<Q>): Bounds<Q> | undefined;
  compile(filter: Filter, condition: (c: Condition) => Bounds<Q>): Bounds<Q>;
}

export function boundsOver<Q>(ops: Connectives<Q>): EngineBounds<Q> {
  return {
    exactly: (q) => exactly(q),
    loosely: (sup, sub = false) => loosely(sup, sub),
    negate: (b) => negate(b, ops),
    foldCommon: (c, condition) => foldCommon(c, condition, ops),
    compile: (filter, condition) => compileBounds(filter, condition, ops),
  };
}
