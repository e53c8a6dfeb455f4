import { FilterSyntaxError } from "../errors.ts";
import { KNOWN_FIELD_TYPES, type KnownFieldType } from "../domain/metadata.ts";
import type { Value } from "./ast.ts";
import { parseFilterInstant } from "./dates.ts";

const INTEGER = /^[+-]?\d+$/;
// Stricter than Number(): no hex, no "Infinity", no surrounding spaces, no empty string.
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

export function knownFieldType(field: string): KnownFieldType | undefined {
  return Object.hasOwn(KNOWN_FIELD_TYPES, field) ? KNOWN_FIELD_TYPES[field as keyof typeof KNOWN_FIELD_TYPES] : undefined;
}

/** The number a filter value denotes for numeric comparison, if it is a finite decimal. */
export function decimalNumber(text: string): number | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const n = Number(text);
  // `+ 0` turns -0 into 0, whose text is the same as JSON's.
  return Number.isFinite(n) ? n + 0 : undefined;
}

/**
 * Types a comparison value by its field (docs/filters.md "Types"); `position` is where the value
 * starts, for the error.
 */
export function typedValue(field: string, text: string, position: number, now: Date): Value {
  switch (knownFieldType(field)) {
    case "string":
      return { text };
    case "integer": {
      const n = INTEGER.test(text) ? Number(text) + 0 : Number.NaN;
      if (!Number.isSafeInteger(n)) throw new FilterSyntaxError(`${field}: expected an integer, got ${quote(text)}`, position);
      return { text: String(n), num: n };
    }
    case "boolean":
      if (text !== "true" && text !== "false")
        throw new FilterSyntaxError(`${field}: expected true or false, got ${quote(text)}`, position);
      return { text };
    case "instant": {
      const instant = parseFilterInstant(text, now);
      if (!instant.ok) throw new FilterSyntaxError(`${field}: ${instant.reason}, got ${quote(text)}`, position);
      return { text: instant.text };
    }
    case undefined: {
      const num = decimalNumber(text);
      return num === undefined ? { text } : { text, num };
    }
  }
}

/** A value for an error message: JSON-quoted and cut short. */
export function quote(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}
