import { FIELD_NAME } from "./ast.ts";

/** A piece of SQL with its bound parameters, in the order of their `?`. */
export interface Fragment {
  readonly sql: string;
  readonly params: readonly unknown[];
}

export function fragment(sql: string, ...params: unknown[]): Fragment {
  return { sql, params };
}

/**
 * Joins with AND / OR as a balanced tree: SQLite limits expression depth to 1000, which a long
 * left-leaning chain of conditions would reach.
 */
export function joinBalanced(parts: readonly Fragment[], op: "AND" | "OR"): Fragment {
  const [first] = parts;
  if (first === undefined) return fragment(op === "AND" ? "1" : "0");
  if (parts.length === 1) return first;
  const mid = parts.length >> 1;
  const left = joinBalanced(parts.slice(0, mid), op);
  const right = joinBalanced(parts.slice(mid), op);
  return { sql: `(${left.sql} ${op} ${right.sql})`, params: [...left.params, ...right.params] };
}

/**
 * The JSON path of a top-level key, to be bound as a parameter. The name is checked again
 * because an AST need not come from the parser, and a quote would change the path.
 */
export function jsonPath(field: string): string {
  if (!FIELD_NAME.test(field)) throw new Error(`compileToSql: invalid field name ${JSON.stringify(field)}`);
  return `$."${field}"`;
}
