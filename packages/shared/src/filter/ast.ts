/**
 * The parsed form of a filter (docs/filters.md). Backends compile this, never the string, so the
 * parser is the only place that knows the syntax.
 *
 * Normalisations done by the parser: `field=` / `field!=` with no value become ISEMPTY /
 * ISNOTEMPTY; `NOTLIKE` becomes `NOT LIKE`; typed values are resolved (see `Value`).
 */

/** Field names as docs/filters.md allows them; metadata keys are the dot-free subset. */
export const FIELD_NAME = /^[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*$/;

/**
 * A comparison value. `text` is what string comparison uses: the value as written, except for
 * known fields where it is normalised (`priority`: the integer's decimal form; `created`: the
 * canonical UTC instant `YYYY-MM-DDThh:mm:ssZ`, relative dates already resolved). `num` is set
 * when the value takes part in numeric comparison: always for `priority`, and for fields
 * without a known type when the text is a finite decimal number.
 */
export interface Value {
  readonly text: string;
  readonly num?: number;
}

export type CompareOp = "=" | "!=" | "<" | "<=" | ">" | ">=";
export type TextOp = "LIKE" | "NOT LIKE" | "STARTSWITH" | "ENDSWITH";

export type Condition =
  | { readonly op: CompareOp; readonly field: string; readonly value: Value }
  | { readonly op: "IN" | "NOT IN"; readonly field: string; readonly values: readonly Value[] }
  /** `text` is matched case-insensitively against the stored value's text; never typed. */
  | { readonly op: TextOp; readonly field: string; readonly text: string }
  | { readonly op: "BETWEEN"; readonly field: string; readonly low: Value; readonly high: Value }
  | { readonly op: "ISEMPTY" | "ISNOTEMPTY" | "ANYTHING"; readonly field: string }
  | { readonly op: "SAMEAS" | "NSAMEAS"; readonly field: string; readonly other: string };

export type Operator = Condition["op"];

/**
 * The condition that a negated one is the negation of (`a!=1` is NOT `a=1`, likewise NOT IN,
 * NOT LIKE, ISNOTEMPTY, NSAMEAS), or null. Compilers build the positive form and negate it.
 */
export function positiveOf(c: Condition): Condition | null {
  switch (c.op) {
    case "!=":
      return { ...c, op: "=" };
    case "NOT IN":
      return { ...c, op: "IN" };
    case "NOT LIKE":
      return { ...c, op: "LIKE" };
    case "ISNOTEMPTY":
      return { ...c, op: "ISEMPTY" };
    case "NSAMEAS":
      return { ...c, op: "SAMEAS" };
    default:
      return null;
  }
}

/** The values of a condition as they were written (typed fields: their normal form). */
export function valueTexts(c: Condition): string[] {
  switch (c.op) {
    case "IN":
    case "NOT IN":
      return c.values.map((v) => v.text);
    case "LIKE":
    case "NOT LIKE":
    case "STARTSWITH":
    case "ENDSWITH":
      return [c.text];
    case "BETWEEN":
      return [c.low.text, c.high.text];
    case "ISEMPTY":
    case "ISNOTEMPTY":
    case "ANYTHING":
    case "SAMEAS":
    case "NSAMEAS":
      return [];
    default:
      return [c.value.text];
  }
}

/** Conditions joined by `^OR`. */
export type Clause = readonly Condition[];
/** Clauses joined by `^`. */
export type Group = readonly Clause[];

export interface OrderTerm {
  readonly field: string;
  readonly descending: boolean;
}

/**
 * Groups joined by `^NQ` (OR). No groups means "match everything": the empty filter, or one
 * made only of ORDERBY terms. A `^NQ` group holding only ORDERBY terms adds no condition (it
 * is not a match-all group), so `status=open^NQORDERBYcreated` is `status=open`, sorted.
 */
export interface Filter {
  readonly groups: readonly Group[];
  readonly orderBy: readonly OrderTerm[];
}
