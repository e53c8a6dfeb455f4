/**
 * Compiles a filter to a SQLite boolean expression over a column of metadata JSON text, with
 * exactly the meaning of the reference evaluator (evaluate.ts; the property tests hold the two
 * together). Values and field names are only ever bound parameters.
 *
 * How each rule of the evaluator is mirrored:
 * - elements: `json_each(col, path)` yields no row for a missing key, one for a scalar and one
 *   per item of an array; a positive condition is an EXISTS over those rows;
 * - numbers: a filter number is bound as its JSON text and read back with json_extract, so it
 *   goes through the same conversion as the stored numbers (a big integer such as 2^62 is
 *   stored as the text "4611686018427388000", which SQLite reads as that exact int64);
 * - text: SQLite compares TEXT by UTF-8 bytes, i.e. by code point; numbers get their JSON text
 *   from a JS function (SQLite would print 15 digits), case folding is JS too (sql-functions.ts);
 * - SAMEAS compares the JSON texts (`->`), which JSON.stringify makes canonical per value.
 */
import type { Condition, Filter, Value } from "./ast.ts";
import { compileOrderBy } from "./sql-order.ts";
import { fragment, joinBalanced, jsonPath, type Fragment } from "./sql-fragment.ts";
import { SQL_FUNCTIONS as F } from "./sql-functions.ts";

export interface CompiledSql {
  /** A boolean SQL expression; `1` when the filter has no conditions. */
  where: string;
  /** Parameters of `where`, in order. */
  params: unknown[];
  /** ORDER BY terms with their direction, for ORDERBY / ORDERBYDESC; empty if none. */
  orderBy: string[];
  /** Parameters of `orderBy` joined with ", "; bind them after those of the WHERE clause. */
  orderParams: unknown[];
}

const COLUMN = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?$/;

const IS_NUMBER = "fe.type IN ('integer', 'real')";
const TEXT =
  `CASE fe.type WHEN 'text' THEN fe.value WHEN 'integer' THEN ${F.numberText}(fe.value) ` +
  `WHEN 'real' THEN ${F.numberText}(fe.value) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' END`;
const NUMBER_PARAM = "json_extract(?, '$')";

/** `metadataColumn` is SQL from our own code (e.g. `d.metadata`), never from a request. */
export function compileToSql(filter: Filter, opts: { metadataColumn: string }): CompiledSql {
  const column = opts.metadataColumn;
  if (!COLUMN.test(column)) throw new Error(`compileToSql: not a column reference: ${column}`);
  const where = joinBalanced(
    filter.groups.map((group) =>
      joinBalanced(group.map((clause) => joinBalanced(clause.map((c) => condition(c, column)), "OR")), "AND"),
    ),
    "OR",
  );
  const order = compileOrderBy(filter.orderBy, column);
  return {
    where: filter.groups.length === 0 ? "1" : where.sql,
    params: [...where.params],
    orderBy: order.terms,
    orderParams: order.params,
  };
}

function condition(c: Condition, column: string): Fragment {
  const path = jsonPath(c.field);
  const some = (pred: Fragment): Fragment =>
    fragment(`EXISTS (SELECT 1 FROM json_each(${column}, ?) AS fe WHERE ${pred.sql})`, path, ...pred.params);
  const none = (pred: Fragment): Fragment => not(some(pred));
  switch (c.op) {
    case "=":
      return some(inList([c.value]));
    case "!=":
      return none(inList([c.value]));
    case "<":
    case "<=":
    case ">":
    case ">=":
      return some(compare(c.op, c.value));
    case "IN":
      return some(inList(c.values));
    case "NOT IN":
      return none(inList(c.values));
    case "LIKE":
      return some(fragment(`${F.contains}(${TEXT}, ?)`, c.text));
    case "NOT LIKE":
      return none(fragment(`${F.contains}(${TEXT}, ?)`, c.text));
    case "STARTSWITH":
      return some(fragment(`${F.startsWith}(${TEXT}, ?)`, c.text));
    case "ENDSWITH":
      return some(fragment(`${F.endsWith}(${TEXT}, ?)`, c.text));
    case "BETWEEN":
      return some(joinBalanced([compare(">=", c.low), compare("<=", c.high)], "AND"));
    case "ISEMPTY":
      return isEmpty(column, path);
    case "ISNOTEMPTY":
      return not(isEmpty(column, path));
    case "ANYTHING":
      return fragment("1");
    case "SAMEAS":
      return fragment(`coalesce((${column} -> ?) = (${column} -> ?), 0)`, path, jsonPath(c.other));
    case "NSAMEAS":
      return not(fragment(`coalesce((${column} -> ?) = (${column} -> ?), 0)`, path, jsonPath(c.other)));
  }
}

/** One element (`fe`) against a value: numerically if both are numbers, else as text. */
function compare(op: "<" | "<=" | ">" | ">=", value: Value): Fragment {
  if (value.num === undefined) return fragment(`(${TEXT}) ${op} ?`, value.text);
  return fragment(
    `(CASE WHEN ${IS_NUMBER} THEN fe.value ${op} ${NUMBER_PARAM} ELSE (${TEXT}) ${op} ? END)`,
    String(value.num),
    value.text,
  );
}

/**
 * One element equal to one of the values. A stored number equals a value with a number
 * numerically, and a value without one (a string-typed field) by its JSON text.
 */
function inList(values: readonly Value[]): Fragment {
  const numeric = values.flatMap((v) => (v.num === undefined ? [] : [String(v.num)]));
  const textual = values.flatMap((v) => (v.num === undefined ? [v.text] : []));
  const numberTests: Fragment[] = [];
  if (numeric.length > 0) numberTests.push(fragment(`fe.value IN (${marks(numeric, NUMBER_PARAM)})`, ...numeric));
  if (textual.length > 0) numberTests.push(fragment(`${F.numberText}(fe.value) IN (${marks(textual)})`, ...textual));
  const forNumber = joinBalanced(numberTests, "OR");
  const texts = values.map((v) => v.text);
  return fragment(
    `(CASE WHEN ${IS_NUMBER} THEN ${forNumber.sql} ELSE (${TEXT}) IN (${marks(texts)}) END)`,
    ...forNumber.params,
    ...texts,
  );
}

/** Missing, "" or []. */
function isEmpty(column: string, path: string): Fragment {
  return fragment(
    `(CASE coalesce(json_type(${column}, ?), 'missing') WHEN 'missing' THEN 1 ` +
      `WHEN 'text' THEN json_extract(${column}, ?) = '' WHEN 'array' THEN json_array_length(${column}, ?) = 0 ELSE 0 END)`,
    path,
    path,
    path,
  );
}

function not(f: Fragment): Fragment {
  return { sql: `NOT ${f.sql}`, params: f.params };
}

function marks(items: readonly unknown[], mark = "?"): string {
  return items.map(() => mark).join(", ");
}
