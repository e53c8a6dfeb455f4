import { FilterSyntaxError } from "../errors.ts";
import { FIELD_NAME } from "./ast.ts";
import { quote } from "./values.ts";

/** End of the run of field-name characters starting at `pos`. */
export function scanField(input: string, pos: number): number {
  let end = pos;
  while (end < input.length && /[a-z0-9_.]/.test(input.charAt(end))) end++;
  return end;
}

/** `context` says where the name was expected, e.g. `after ORDERBY`. */
export function checkFieldName(field: string, position: number, context: string): void {
  const where = context === "" ? "" : ` ${context}`;
  if (field === "") throw new FilterSyntaxError(`missing field name${where}`, position);
  if (!FIELD_NAME.test(field)) {
    throw new FilterSyntaxError(`invalid field name ${quote(field)}${where}: expected [a-z_][a-z0-9_]*, dots between parts`, position);
  }
}

/** True at a `^` that separates terms: `^^` is a literal `^` inside a value. */
export function isSeparator(input: string, pos: number): boolean {
  return input.charAt(pos) === "^" && input.charAt(pos + 1) !== "^";
}

/** End of a value starting at `pos`: the next separator or the end of the input. */
export function scanValue(input: string, pos: number): number {
  let end = pos;
  while (end < input.length) {
    if (input.charAt(end) === "^") {
      if (input.charAt(end + 1) !== "^") break;
      end += 2;
    } else {
      end++;
    }
  }
  return end;
}

/** A value as written, with `^^` read as `^` (the raw text is split on `,`/`@` first). */
export function unescapeValue(raw: string): string {
  return raw.replaceAll("^^", "^");
}

/** The start of unexpected text, for an error message: an uppercase word or one character. */
export function describeAt(input: string, pos: number): string {
  const word = /^[A-Z]+/.exec(input.slice(pos, pos + 40));
  if (word) return quote(word[0]);
  const cp = input.codePointAt(pos);
  return cp === undefined ? "end of filter" : quote(String.fromCodePoint(cp));
}
