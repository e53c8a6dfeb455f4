/**
 * Compiles a filter to a LanceDB (DataFusion SQL) `where` predicate over the columns of
 * lancedb-columns.ts. The predicate holds for every row the reference evaluator accepts;
 * `exact` says it holds for no other. When it is not exact the caller post-filters with
 * `evaluate`. `where: null` means "no condition".
 *
 * Every value reaches the SQL through `sqlString` / `sqlInteger` only. DataFusion's string
 * literals take any character but `'` as itself (backslashes and NUL included; checked by the
 * property test's hostile values), so doubling `'` is the whole escaping. A value that is not
 * well-formed Unicode cannot be written as UTF-8 at all: its condition becomes inexact.
 *
 * Exact: every operator on the known fields (typed columns; case folding is JS's, stored in the
 * `lc_*` columns; `priority` is cast to its decimal text, which for safe integers is JS's);
 * `=`, `!=`, IN, NOT IN, ISEMPTY, ISNOTEMPTY, SAMEAS, NSAMEAS, ANYTHING on any field; any
 * condition on a dotted field (always missing). Not exact: `<` `<=` `>` `>=` BETWEEN LIKE
 * NOT LIKE STARTSWITH ENDSWITH on other keys (superset: the key is present, or everything for
 * NOT LIKE), and conditions holding an ill-formed value (superset: everything).
 *
 * Each condition compiles to a superset `sup` and a subset `sub` (equal when exact); AND and OR
 * combine them part by part and NOT swaps them, so a loosened condition under a negation stays
 * a superset. Every compiled piece is two-valued (never SQL NULL), so NOT is plain NOT.
 */
import { valueTexts, type Condition, type Filter, type Value } from "./ast.ts";
import { boundsOver, holdsFor, type Bounds as SharedBounds } from "./bounds.ts";
import { lower } from "./compare.ts";
import { FOLDED_COLUMN, KNOWN_COLUMN, eqToken, isKnownField, samePair, type KnownField } from "./lancedb-columns.ts";

export interface CompiledWhere {
  where: string | null;
  exact: boolean;
}

/** A predicate, or `true` / `false` for all rows / none. */
type Sql = string | boolean;

type Bounds = SharedBounds<string>;

/** The one way a text value enters the SQL. */
export function sqlString(value: string): string {
  if (!value.isWellFormed()) throw new Error("sqlString: not well-formed Unicode");
  return `'${value.replaceAll("'", "''")}'`;
}

function sqlInteger(n: number): string {
  if (!Number.isSafeInteger(n)) throw new Error(`sqlInteger: not a safe integer: ${n}`);
  return String(n);
}

export function and(items: readonly Sql[]): Sql {
  if (items.includes(false)) return false;
  const rest = items.filter((q): q is string => q !== true);
  return rest.length === 0 ? true : rest.length === 1 ? rest[0]! : `(${rest.join(" AND ")})`;
}

export function or(items: readonly Sql[]): Sql {
  if (items.includes(true)) return true;
  const rest = items.filter((q): q is string => q !== false);
  return rest.length === 0 ? false : rest.length === 1 ? rest[0]! : `(${rest.join(" OR ")})`;
}

function not(q: Sql): Sql {
  return typeof q === "boolean" ? !q : `(NOT ${q})`;
}

const { exactly, loosely, foldCommon, compile } = boundsOver<string>({ and, or, not });

export function compileToLanceWhere(filter: Filter): CompiledWhere {
  const b = compile(filter, condition);
  return { where: b.sup === true ? null : b.sup === false ? "false" : b.sup, exact: b.exact };
}

function condition(c: Condition): Bounds {
  const common = foldCommon(c, condition);
  if (common) return common;
  if (!valueTexts(c).every((t) => t.isWellFormed())) return { sup: true, sub: false, exact: false };
  if (c.op === "SAMEAS") {
    return exactly(c.field === c.other ? present(c.field) : `array_has(meta_same, ${sqlString(samePair(c.field, c.other))})`);
  }
  return isKnownField(c.field) ? known(c, c.field) : untyped(c);
}

function present(field: string): string {
  return isKnownField(field) ? `(${KNOWN_COLUMN[field]} IS NOT NULL)` : `array_has(meta_keys, ${sqlString(field)})`;
}

/** A known field: its typed column; exact for every operator. */
function known(c: Condition, field: KnownField): Bounds {
  const column = KNOWN_COLUMN[field];
  if (field === "flag") {
    // A stored flag is true, false or missing: keep the cases the condition accepts.
    const cases: [Parameters<typeof holdsFor>[1], string][] = [
      [{ flag: true }, "m_flag IS NOT NULL AND m_flag = 1"],
      [{ flag: false }, "m_flag IS NOT NULL AND m_flag = 0"],
      [{}, "m_flag IS NULL"],
    ];
    return exactly(or(cases.filter(([m]) => holdsFor(c, m)).map(([, sql]) => `(${sql})`)));
  }
  const literal = (v: Value) =>
    field === "priority" ? sqlInteger(v.num!) : field === "created" ? sqlInteger(Date.parse(v.text)) : sqlString(v.text);
  const has = (pred: string) => `(${column} IS NOT NULL AND ${pred})`;
  const text = field === "priority" ? "CAST(m_priority AS string)" : FOLDED_COLUMN[field];
  switch (c.op) {
    case "=":
      return exactly(has(`${column} = ${literal(c.value)}`));
    case "IN":
      return exactly(has(`${column} IN (${c.values.map(literal).join(", ")})`));
    case "<":
    case "<=":
    case ">":
    case ">=":
      return exactly(has(`${column} ${c.op} ${literal(c.value)}`));
    case "BETWEEN":
      return exactly(has(`${column} >= ${literal(c.low)} AND ${column} <= ${literal(c.high)}`));
    case "LIKE":
      return exactly(has(c.text === "" ? "true" : `strpos(${text}, ${sqlString(lower(c.text))}) > 0`));
    case "STARTSWITH":
      return exactly(has(`starts_with(${text}, ${sqlString(lower(c.text))})`));
    case "ENDSWITH":
      return exactly(has(`ends_with(${text}, ${sqlString(lower(c.text))})`));
    case "ISEMPTY":
      // A stored priority or instant is never "".
      return exactly(field === "priority" || field === "created" ? `(${column} IS NULL)` : `(${column} IS NULL OR ${column} = '')`);
    default:
      throw new Error(`unreachable: ${c.op}`);
  }
}

/** Any other key: the derived lists, exact for equality and emptiness. */
function untyped(c: Condition): Bounds {
  const anyEqual = (values: readonly Value[]) => {
    const tokens = [
      ...new Set(values.flatMap((v) => [eqToken(c.field, v.text), ...(v.num === undefined ? [] : [eqToken(c.field, v.num)])])),
    ];
    return `array_has_any(meta_eq, [${tokens.map(sqlString).join(", ")}])`;
  };
  switch (c.op) {
    case "=":
      return exactly(anyEqual([c.value]));
    case "IN":
      return exactly(anyEqual(c.values));
    case "ISEMPTY":
      return exactly(`(NOT array_has(meta_filled, ${sqlString(c.field)}))`);
    default:
      // Ranges compare numbers or code points, and LIKE folds case, per element: not
      // expressible on the lists, so keep every document that has the key.
      return loosely(present(c.field));
  }
}
