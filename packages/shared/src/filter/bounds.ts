/**
 * What the index compilers share: a condition compiled for an engine as two bounds, a superset
 * (`sup`: every match passes it) and a subset (`sub`: what passes it matches), equal when the
 * engine can express the condition exactly. Conditions combine through the filter's structure
 * (`^OR`, then `^`, then `^NQ`) with the engine's own AND, OR and NOT; an inexact result is
 * finished with the reference evaluator (filter/evaluate.ts). `true` matches everything, `false`
 * nothing.
 */
import type { Condition, Filter } from "./ast.ts";

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

/** NOT swaps the bounds: what surely matches becomes what surely does not. */
export function negate<Q>(b: Bounds<Q>, ops: Connectives<Q>): Bounds<Q> {
  return b.exact ? exactly(ops.not(b.sup)) : { sup: ops.not(b.sub), sub: ops.not(b.sup), exact: false };
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
  compile(filter: Filter, condition: (c: Condition) => Bounds<Q>): Bounds<Q>;
}

export function boundsOver<Q>(ops: Connectives<Q>): EngineBounds<Q> {
  return {
    exactly: (q) => exactly(q),
    loosely: (sup, sub = false) => loosely(sup, sub),
    negate: (b) => negate(b, ops),
    compile: (filter, condition) => compileBounds(filter, condition, ops),
  };
}
