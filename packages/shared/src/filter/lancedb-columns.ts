/**
 * The columns a LanceDB row carries for its document's metadata, so that the `where` clauses of
 * lancedb.ts can filter on them. The compiler and this row builder are two halves of one
 * encoding: change them together (the property test holds them to the reference evaluator).
 *
 * - Known fields get typed columns (`m_*`): strings, `m_priority` int64, `m_flag` bool,
 *   `m_flag` int8 (1 / 0: apache-arrow 18 writes an all-null Bool column of a batch without its
 *   data buffer, which LanceDB rejects), `m_created` int64 epoch milliseconds; null when the
 *   field is missing. Their case-folded
 *   text (`lc_*`, folded here with the evaluator's own `lower`) serves LIKE / STARTSWITH /
 *   ENDSWITH, so DataFusion's `lower()` never has to agree with JS.
 * - Other keys: `meta_keys` (keys present), `meta_filled` (keys not empty in the ISEMPTY
 *   sense), `meta_eq` (one `key=token` per element, see `eqToken`), for exact equality.
 * - `meta_same`: `a=b` for every pair of keys (known or not, a < b) holding the same JSON
 *   value, which makes SAMEAS exact.
 */
import { Field, Int8, Int64, List, Utf8, type DataType } from "apache-arrow";
import type { Metadata, Scalar } from "../domain/metadata.ts";
import { isCanonicalInstant } from "../domain/instant.ts";
import { elementsOf, isEmpty, lower, samePair, sameValue, textOf } from "./compare.ts";

export const KNOWN_COLUMN = {
  sys_id: "m_sys_id",
  status: "m_status",
  type: "m_type",
  priority: "m_priority",
  flag: "m_flag",
  created: "m_created",
} as const;

export type KnownField = keyof typeof KNOWN_COLUMN;

/** Case-folded text columns of the known fields that have text; `priority` is cast instead. */
export const FOLDED_COLUMN = { sys_id: "lc_sys_id", status: "lc_status", type: "lc_type", created: "lc_created" } as const;

export function isKnownField(field: string): field is KnownField {
  return Object.hasOwn(KNOWN_COLUMN, field);
}

const list = () => new List(new Field("item", new Utf8(), true));

/** The metadata part of a table schema. */
export function metadataFields(): Field[] {
  const typed: [string, DataType][] = [
    ["m_sys_id", new Utf8()],
    ["m_status", new Utf8()],
    ["m_type", new Utf8()],
    ["m_priority", new Int64()],
    ["m_flag", new Int8()],
    ["m_created", new Int64()],
    ["lc_sys_id", new Utf8()],
    ["lc_status", new Utf8()],
    ["lc_type", new Utf8()],
    ["lc_created", new Utf8()],
  ];
  return [
    new Field("metadata", new Utf8(), false),
    ...typed.map(([name, type]) => new Field(name, type, true)),
    ...["meta_keys", "meta_filled", "meta_eq", "meta_same"].map((name) => new Field(name, list(), false)),
  ];
}

export type MetadataRow = Record<string, string | number | bigint | null | string[]>;

/**
 * Equality token of one element of an untyped field. The evaluator's `=` compares a stored
 * number numerically with a value that has a number, and anything else by its text. A stored
 * number's text (String(x)) always parses as a decimal, so a value equal to it as text has a
 * number too: a number equals a value iff the value has a number and `String` of both agree
 * (String is one-to-one on finite doubles, -0 printing as 0).
 */
export function eqToken(field: string, x: Scalar): string {
  return typeof x === "number" ? `${field}=n:${String(x)}` : `${field}=t:${textOf(x)}`;
}

/** The metadata columns of one document. Throws when a known field has the wrong type. */
export function metadataColumns(metadata: Metadata): MetadataRow {
  const row: MetadataRow = { metadata: JSON.stringify(metadata) };
  const value = (field: KnownField) => {
    const v = Object.hasOwn(metadata, field) ? metadata[field] : undefined;
    return v === undefined ? null : v;
  };
  for (const field of ["sys_id", "status", "type"] as const) {
    const v = value(field);
    if (v !== null && typeof v !== "string") throw wrongType(field, "a string");
    row[KNOWN_COLUMN[field]] = v;
    row[FOLDED_COLUMN[field]] = v === null ? null : lower(v);
  }
  const priority = value("priority");
  if (priority !== null && !Number.isSafeInteger(priority)) throw wrongType("priority", "an integer");
  row.m_priority = priority === null ? null : BigInt(priority as number);
  const flag = value("flag");
  if (flag !== null && typeof flag !== "boolean") throw wrongType("flag", "a boolean");
  row.m_flag = flag === null ? null : flag ? 1 : 0;
  const created = value("created");
  if (created !== null && (typeof created !== "string" || !isCanonicalInstant(created)))
    throw wrongType("created", "a UTC instant YYYY-MM-DDThh:mm:ssZ");
  row.m_created = created === null ? null : BigInt(Date.parse(created as string));
  row.lc_created = created === null ? null : lower(created as string);

  const keys = Object.keys(metadata)
    .filter((k) => metadata[k] !== undefined)
    .sort();
  const untyped = keys.filter((k) => !isKnownField(k));
  row.meta_keys = untyped;
  row.meta_filled = untyped.filter((k) => !isEmpty(metadata, k));
  row.meta_eq = [...new Set(untyped.flatMap((k) => elementsOf(metadata, k).map((x) => eqToken(k, x))))];
  row.meta_same = keys.flatMap((a, i) =>
    keys
      .slice(i + 1)
      .filter((b) => sameValue(metadata, a, b))
      .map((b) => samePair(a, b)),
  );
  return row;
}

/** The `meta_same` entry of two different keys, in either order (written once, in compare.ts). */
export { samePair };

function wrongType(field: string, expected: string): Error {
  return new Error(`metadata field ${field} must be ${expected} (metadata is validated by parseMetadata before indexing)`);
}
