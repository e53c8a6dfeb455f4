/**
 * Values that would change the meaning of a query if pasted into one instead of passed as a
 * value: SQL and LanceDB `where` fragments, LIKE and glob wildcards, NUL, path climbs,
 * URL-encoded separators. The contracts store them in every backend and check they come
 * back exactly and match only themselves.
 */
export const HOSTILE_VALUES: readonly string[] = [
  "' OR 1=1 --",
  '") OR true --',
  "') OR ('1'='1",
  "'; DROP TABLE documents; --",
  "`id`",
  "it's",
  "''",
  "\\",
  "\\'",
  "50%",
  "%",
  "_",
  "a_c",
  "\u0000",
  "x\u0000y",
  "../../etc/passwd",
  "..\\..\\windows",
  "a%2Fb",
  "%2e%2e%2f",
  "*",
  "?",
  "[a-z]",
  '{"$ne":null}',
  "ns:doc:x",
  "😀 é",
];

/** A value written into a filter: `^` doubled, the language's only escape. */
export const filterValue = (v: string) => v.replaceAll("^", "^^");

/** Ids and names that the API admits and that a LIKE pattern or a glob would confuse. */
export const LOOKALIKE_IDS: readonly string[] = ["a_c", "abc", "a-c", "a.c", "a:c", "a@c", "A_c", "a_", "a__c"];
