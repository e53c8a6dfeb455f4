import { FilterSyntaxError } from "../errors.ts";
import type { Condition, Value } from "./ast.ts";
import { checkFieldName, describeAt, isSeparator, scanField, scanValue, unescapeValue } from "./scan.ts";
import { quote, typedValue } from "./values.ts";

/** Operator tokens, longest first so `NOT LIKE` wins over `NOT IN`'s prefix and `>=` over `>`. */
export const OPERATOR_TOKENS = [
  "ISNOTEMPTY",
  "STARTSWITH",
  "ANYTHING",
  "ENDSWITH",
  "NOT LIKE",
  "ISEMPTY",
  "NOTLIKE",
  "BETWEEN",
  "NSAMEAS",
  "NOT IN",
  "SAMEAS",
  "LIKE",
  "IN",
  "!=",
  "<=",
  ">=",
  "=",
  "<",
  ">",
] as const;
type Token = (typeof OPERATOR_TOKENS)[number];

function matchOperator(input: string, pos: number): Token | undefined {
  return OPERATOR_TOKENS.find((t) => input.startsWith(t, pos));
}

/** Parses `field operator [value]` at `pos`; `end` is the separator after it or the input's end. */
export function parseCondition(input: string, pos: number, now: Date): { condition: Condition; end: number } {
  const fieldEnd = scanField(input, pos);
  const field = input.slice(pos, fieldEnd);
  const token = matchOperator(input, fieldEnd);
  if (field === "" && token === undefined) {
    throw new FilterSyntaxError(`expected a field name, found ${describeAt(input, pos)}`, pos);
  }
  checkFieldName(field, pos, token === undefined ? "" : `before operator ${quote(token)}`);
  if (token === undefined) {
    if (fieldEnd === input.length || isSeparator(input, fieldEnd)) {
      throw new FilterSyntaxError(`condition without an operator: ${quote(field)}`, fieldEnd);
    }
    throw new FilterSyntaxError(`unknown operator ${describeAt(input, fieldEnd)} after field ${quote(field)}`, fieldEnd);
  }
  const valueStart = fieldEnd + token.length;
  const end = scanValue(input, valueStart);
  return { condition: buildCondition(field, token, input.slice(valueStart, end), valueStart, now), end };
}

function buildCondition(field: string, token: Token, raw: string, at: number, now: Date): Condition {
  const text = unescapeValue(raw);
  switch (token) {
    case "ISEMPTY":
    case "ISNOTEMPTY":
    case "ANYTHING":
      if (raw !== "") throw new FilterSyntaxError(`${token} takes no value, found ${quote(text)}`, at);
      return { op: token, field };
    case "=":
    case "!=":
      // docs/filters.md: `field=` with no value means the field is empty.
      if (raw === "") return { op: token === "=" ? "ISEMPTY" : "ISNOTEMPTY", field };
      return { op: token, field, value: typedValue(field, text, at, now) };
    case "<":
    case "<=":
    case ">":
    case ">=":
      return { op: token, field, value: typedValue(field, text, at, now) };
    case "IN":
    case "NOT IN":
      return { op: token, field, values: listValues(field, token, raw, at, now) };
    case "LIKE":
    case "NOT LIKE":
    case "NOTLIKE":
    case "STARTSWITH":
    case "ENDSWITH":
      return { op: token === "NOTLIKE" ? "NOT LIKE" : token, field, text };
    case "BETWEEN":
      return between(field, raw, at, now);
    case "SAMEAS":
    case "NSAMEAS":
      checkFieldName(text, at, `after ${token}`);
      return { op: token, field, other: text };
  }
}

function listValues(field: string, token: string, raw: string, at: number, now: Date): Value[] {
  if (raw === "") throw new FilterSyntaxError(`empty ${token} list`, at);
  const values: Value[] = [];
  let itemStart = at;
  for (const item of raw.split(",")) {
    if (item === "") throw new FilterSyntaxError(`empty item in ${token} list`, itemStart);
    values.push(typedValue(field, unescapeValue(item), itemStart, now));
    itemStart += item.length + 1;
  }
  return values;
}

function between(field: string, raw: string, at: number, now: Date): Condition {
  const parts = raw.split("@");
  const [lowRaw, highRaw] = parts;
  if (parts.length !== 2 || lowRaw === undefined || highRaw === undefined) {
    const where = parts.length === 1 ? at : at + raw.indexOf("@", raw.indexOf("@") + 1);
    throw new FilterSyntaxError(`BETWEEN needs exactly one @ (low@high), found ${parts.length - 1}`, where);
  }
  const highAt = at + lowRaw.length + 1;
  if (lowRaw === "") throw new FilterSyntaxError("BETWEEN is missing its low value (low@high)", at);
  if (highRaw === "") throw new FilterSyntaxError("BETWEEN is missing its high value (low@high)", highAt);
  return {
    op: "BETWEEN",
    field,
    low: typedValue(field, unescapeValue(lowRaw), at, now),
    high: typedValue(field, unescapeValue(highRaw), highAt, now),
  };
}
