import type Database from "better-sqlite3";

/**
 * SQL functions the compiled filters call where SQLite alone would disagree with the reference
 * evaluator: SQLite's lower() and LIKE fold ASCII only, and it renders reals with 15 digits
 * where JSON (and JS) use the shortest text that reads back as the same number. All are
 * deterministic; the index registers them once per connection.
 */
export const SQL_FUNCTIONS = {
  numberText: "docstore_number_text",
  contains: "docstore_icontains",
  startsWith: "docstore_istarts_with",
  endsWith: "docstore_iends_with",
} as const;

export function registerFilterFunctions(db: Database.Database): void {
  // safeIntegers off: a stored integer reaches JS as the double it was written from.
  const options = { deterministic: true, safeIntegers: false };
  db.function(SQL_FUNCTIONS.numberText, options, (x: unknown) => (typeof x === "number" ? String(x) : null));
  db.function(SQL_FUNCTIONS.contains, options, caseInsensitive((h, n) => h.includes(n)));
  db.function(SQL_FUNCTIONS.startsWith, options, caseInsensitive((h, n) => h.startsWith(n)));
  db.function(SQL_FUNCTIONS.endsWith, options, caseInsensitive((h, n) => h.endsWith(n)));
}

function caseInsensitive(test: (haystack: string, needle: string) => boolean) {
  return (haystack: unknown, needle: unknown): number | null => {
    if (typeof haystack !== "string" || typeof needle !== "string") return null;
    return test(haystack.toLowerCase(), needle.toLowerCase()) ? 1 : 0;
  };
}
