/**
 * `--metadata-from`: metadata keys taken from each record's fields, e.g.
 * `status=state,priority=prio:int,tags=labels:list`. A record's field is a JSONL line's
 * top-level field, a CSV column, or for files `path`, `name`, `ext`, `dir`.
 */
/** Metadata as read from a source: passed on as it is; the service checks it and says what is wrong. */
export type Metadata = Record<string, unknown>;

export type FieldType = "string" | "int" | "number" | "bool" | "json" | "list";
const TYPES: readonly FieldType[] = ["string", "int", "number", "bool", "json", "list"];

export interface FieldMap {
  key: string;
  field: string;
  type?: FieldType;
}

/** Typed fields of the service's metadata, read as such from CSV cells when no type is given. */
const KNOWN: Record<string, FieldType> = { priority: "int", flag: "bool" };

export class UsageError extends Error {}

/** Parses `key=field[:type]` entries, comma-separated or repeated. */
export function parseMapping(specs: readonly string[]): FieldMap[] {
  return specs
    .flatMap((s) => s.split(","))
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = /^([^=:]+)(?:=([^:]+))?(?::(.+))?$/.exec(entry);
      if (!m) throw new UsageError(`--metadata-from: cannot read "${entry}"; expected key=field or key=field:type, e.g. priority=prio:int`);
      const type = m[3] as FieldType | undefined;
      if (type !== undefined && !TYPES.includes(type))
        throw new UsageError(`--metadata-from: ${entry}: unknown type "${type}"; accepted: ${TYPES.join(", ")}`);
      return { key: m[1]!.trim(), field: (m[2] ?? m[1]!).trim(), type };
    });
}

/** Parses `--metadata`: a JSON object applied to every document. */
export function parseMetadataOption(text: string | undefined): Metadata {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--metadata: not JSON (${(err as Error).message}); expected an object, e.g. '{"type":"kb"}'`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new UsageError(`--metadata: expected a JSON object, e.g. '{"type":"kb"}'`);
  return value as Metadata;
}

/** A field's value as the type says; a string from CSV is converted, a JSON value kept unless a type is given. */
export function convert(value: unknown, type: FieldType | undefined, where: string): unknown {
  if (type === undefined || value === null) return value;
  const text = typeof value === "string" ? value.trim() : value;
  const fail = () => {
    throw new Error(
      `${where}: expected ${type === "int" ? "an integer" : type === "bool" ? "true or false" : `a ${type}`}, got ${JSON.stringify(value)}`,
    );
  };
  switch (type) {
    case "string":
      return typeof value === "string" ? value : JSON.stringify(value);
    case "int":
    case "number": {
      const n = typeof text === "number" ? text : typeof text === "string" && text !== "" ? Number(text) : NaN;
      if (!Number.isFinite(n) || (type === "int" && !Number.isInteger(n))) fail();
      return n;
    }
    case "bool":
      if (typeof text === "boolean") return text;
      if (typeof text === "string" && /^(true|1|yes)$/i.test(text)) return true;
      if (typeof text === "string" && /^(false|0|no)$/i.test(text)) return false;
      return fail();
    case "json":
      if (typeof value !== "string") return value;
      try {
        return JSON.parse(value);
      } catch {
        return fail();
      }
    case "list":
      if (Array.isArray(value)) return value;
      return String(value)
        .split(/[;|]/)
        .map((s) => s.trim())
        .filter(Boolean);
  }
}

/** Metadata from a record's fields: each mapped key whose field is present and not empty. */
export function mapFields(record: Record<string, unknown>, mapping: readonly FieldMap[], fromText: boolean): Metadata {
  const out: Metadata = {};
  for (const { key, field, type } of mapping) {
    const value = record[field];
    if (value === undefined || value === "") continue;
    out[key] = convert(value, type ?? (fromText ? KNOWN[key] : undefined), field);
  }
  return out;
}

/** CSV cells as metadata when no mapping is given: every column, the known typed fields converted. */
export function csvMetadata(row: Record<string, string>, skip: ReadonlySet<string>): Metadata {
  const out: Metadata = {};
  for (const [column, value] of Object.entries(row)) {
    if (skip.has(column) || value === "") continue;
    out[column] = convert(value, KNOWN[column], column);
  }
  return out;
}
