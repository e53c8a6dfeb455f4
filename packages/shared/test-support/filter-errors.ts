/** The error a filter is refused with, for tests that check what it names. */
import { expect } from "vitest";
import { FilterSyntaxError } from "../src/errors.ts";
import { parseFilter } from "../src/filter/parse.ts";

/** Parses `s` expecting a FilterSyntaxError, and returns it (anything else fails the test). */
export function syntaxError(s: string, now: Date): FilterSyntaxError {
  try {
    parseFilter(s, now);
  } catch (err) {
    expect(err).toBeInstanceOf(FilterSyntaxError);
    return err as FilterSyntaxError;
  }
  throw new Error(`expected ${JSON.stringify(s)} to be rejected`);
}
