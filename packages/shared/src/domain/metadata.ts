import { z } from "zod";
import { BadRequestError } from "../errors.ts";
import { isCanonicalInstant } from "./instant.ts";
import { tooDeep } from "./json.ts";

export type Scalar = string | number | boolean;
export type Metadata = Record<string, Scalar | Scalar[]>;

/** Types of the known metadata fields; the filter parser types its values from this map. */
export const KNOWN_FIELD_TYPES = {
  sys_id: "string",
  status: "string",
  type: "string",
  priority: "integer",
  flag: "boolean",
  created: "instant",
} as const satisfies Record<string, "string" | "integer" | "boolean" | "instant">;

export type KnownFieldType = (typeof KNOWN_FIELD_TYPES)[keyof typeof KNOWN_FIELD_TYPES];

export const METADATA_LIMITS = { keys: 64, keyLength: 128, stringLength: 8192, arrayItems: 256, jsonBytes: 65_536 } as const;

/** Same rule as filter field names, so an uppercase filter operator can never be part of a key. */
export const METADATA_KEY = /^[a-z_][a-z0-9_]*$/;

const L = METADATA_LIMITS;
const SCALAR_ERROR = "expected a string, a finite number or a boolean";

// Lone surrogates would not survive the trip to UTF-8 (SQLite, Qdrant) unchanged, so the
// stored value would no longer be the one the filter evaluator sees.
const text = z
  .string({ error: "expected a string" })
  .max(L.stringLength, { error: `longer than ${L.stringLength} characters` })
  .refine((s) => s.isWellFormed(), { error: "contains an unpaired surrogate (invalid Unicode)" });

const scalar = z.union([text, z.number(), z.boolean()], { error: SCALAR_ERROR });

const scalarArray = z.array(scalar).max(L.arrayItems, { error: `more than ${L.arrayItems} items` });

// A union would report a bad array item only as "invalid input"; choosing the branch by shape
// keeps the item's own message and index.
const value = z.custom<Scalar | Scalar[]>().superRefine((v, ctx) => {
  if (!Array.isArray(v) && typeof v === "object") {
    ctx.addIssue({ code: "custom", message: `${SCALAR_ERROR}, or an array of them` });
    return;
  }
  const result = (Array.isArray(v) ? scalarArray : scalar).safeParse(v);
  for (const issue of result.error?.issues ?? []) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
});

const created = z
  .string({ error: "expected a UTC timestamp YYYY-MM-DDThh:mm:ssZ" })
  .refine(isCanonicalInstant, { error: "expected a real UTC timestamp in the form YYYY-MM-DDThh:mm:ssZ" });

const known = {
  sys_id: text.optional(),
  status: text.optional(),
  type: text.optional(),
  priority: z.int({ error: "expected an integer" }).optional(),
  flag: z.boolean({ error: "expected a boolean (true or false)" }).optional(),
  created: created.optional(),
} satisfies Record<keyof typeof KNOWN_FIELD_TYPES, z.ZodType>;

// Keys are checked on the raw object first: zod's object parser silently drops `__proto__`.
const shape = z.unknown().superRefine((v, ctx) => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    ctx.addIssue({ code: "custom", message: "expected a JSON object" });
    return;
  }
  const keys = Object.keys(v);
  if (keys.length > L.keys) ctx.addIssue({ code: "custom", message: `at most ${L.keys} keys allowed, got ${keys.length}` });
  for (const key of keys) {
    if (key.length > L.keyLength || !METADATA_KEY.test(key) || key === "__proto__") {
      ctx.addIssue({
        code: "custom",
        message: `invalid key ${quote(key)}: keys must match [a-z_][a-z0-9_]* (at most ${L.keyLength} characters)`,
      });
    }
  }
});

/** Document metadata as accepted at upload time; its issues name the offending key. */
export const metadataSchema = shape.pipe(z.object(known).catchall(value)).superRefine((v, ctx) => {
  const bytes = Buffer.byteLength(JSON.stringify(v), "utf8");
  if (bytes > L.jsonBytes) ctx.addIssue({ code: "custom", message: `${bytes} bytes of JSON, more than ${L.jsonBytes}` });
});

/**
 * What `metadataSchema` accepts, as JSON Schema for the API's description: built from the same
 * limits and key rule. (The byte limit of the whole and unpaired surrogates are checked too but
 * have no JSON Schema keyword; the description names the first.)
 */
export function metadataJsonSchema(): Record<string, unknown> {
  const string = { type: "string", maxLength: L.stringLength };
  const scalar = { anyOf: [string, { type: "number" }, { type: "boolean" }] };
  const types = {
    string,
    integer: { type: "integer" },
    boolean: { type: "boolean" },
    instant: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$" },
  };
  return {
    type: "object",
    maxProperties: L.keys,
    propertyNames: { pattern: METADATA_KEY.source, maxLength: L.keyLength, not: { const: "__proto__" } },
    properties: Object.fromEntries(Object.entries(KNOWN_FIELD_TYPES).map(([key, type]) => [key, types[type]])),
    additionalProperties: { anyOf: [...scalar.anyOf, { type: "array", maxItems: L.arrayItems, items: scalar }] },
    description:
      `JSON object of at most ${L.jsonBytes} bytes. Typed fields: sys_id, status, type (strings), priority (integer), flag (boolean), ` +
      `created (YYYY-MM-DDThh:mm:ssZ); other keys [a-z_][a-z0-9_]* with a string, number, boolean or an array of those`,
  };
}

/** Validates metadata from a JSON body; every problem is a 400 naming the key. */
export function parseMetadata(input: unknown): Metadata {
  const result = metadataSchema.safeParse(input);
  if (result.success) return result.data as Metadata;
  const problems = result.error.issues.slice(0, 5).map((i) => {
    const received = valueAt(input, i.path);
    return `${issuePath(i.path)}: ${i.message}${i.path.length > 0 && received !== undefined ? `; received ${shown(received)}` : ""}`;
  });
  throw new BadRequestError(problems.join("; "));
}

/** Validates metadata sent as a JSON string (the multipart form field). */
export function parseMetadataJson(textInput: string): Metadata {
  const bytes = Buffer.byteLength(textInput, "utf8");
  if (bytes > L.jsonBytes) throw new BadRequestError(`metadata: ${bytes} bytes of JSON, more than ${L.jsonBytes}`);
  const deep = tooDeep(textInput);
  if (deep) throw new BadRequestError(`metadata: ${deep}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(textInput);
  } catch (err) {
    throw new BadRequestError(`metadata: malformed JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseMetadata(parsed);
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const key of path) v = v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[key] : undefined;
  return v;
}

function shown(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 60 ? `${json.slice(0, 60)}…` : json;
}

function issuePath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, p) => (typeof p === "number" ? `${acc}[${p}]` : `${acc}.${String(p)}`), "metadata");
}

function quote(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}
