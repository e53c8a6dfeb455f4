/**
 * Zod schemas of every request and response. The routes validate with them and openapi.ts
 * turns the same schemas into the OpenAPI document, so the two cannot drift apart.
 */
import { z } from "zod";
import {
  BadRequestError,
  COLLECTION_NAME,
  COLLECTION_NAME_RULE,
  DISAGREEMENTS,
  DOC_ID,
  DOC_ID_RULE,
  UNREPAIRABLE,
  metadataJsonSchema,
  tooDeep,
} from "@docstore/shared";
import { unknownKeys } from "./keys.ts";

const NAME_ACCEPTED = `expected a collection name: ${COLLECTION_NAME_RULE}`;
const DOC_ID_ACCEPTED = `expected a document id: ${DOC_ID_RULE}`;
export const collectionName = z.string({ error: NAME_ACCEPTED }).regex(COLLECTION_NAME, { error: NAME_ACCEPTED });
export const docId = z.string({ error: DOC_ID_ACCEPTED }).regex(DOC_ID, { error: DOC_ID_ACCEPTED });
const flag = z
  .enum(["true", "false", "1", "0", ""], { error: "expected true or false (or 1 or 0)" })
  .transform((v) => v === "true" || v === "1" || v === "");

/** An integer parameter; `governed` names the setting behind a bound, e.g. MAX_K. */
function integer(min: number, max: number, governed?: string) {
  const accepted = { error: `expected an integer from ${min} to ${max}${governed ? ` (the server's ${governed})` : ""}` };
  // A number, or a string holding one (the query string's); `true` or `[1]` would coerce to 1.
  return z
    .union([z.number(), z.string()], accepted)
    .pipe(z.coerce.number<string | number>(accepted).int(accepted).min(min, accepted).max(max, accepted))
    .meta({ type: "integer", minimum: min, maximum: max }); // what the document shows: the union is how it is read
}

const METADATA_ACCEPTED = "expected a JSON object of metadata, or a string holding one (see the metadata rules in the README)";
/**
 * An object, or a string holding one, as the multipart form's field takes it. parseMetadata in
 * the handler checks the object; the document shows its rules. The object is passed on as sent:
 * z.record would copy it, and copying a `__proto__` key sets the copy's prototype instead, so
 * the key would vanish unseen.
 */
const metadataObject = z
  .custom<Record<string, unknown>>((v) => v !== null && typeof v === "object" && !Array.isArray(v))
  .meta(metadataJsonSchema());
const metadataInput = z
  .union([metadataObject, z.string().describe("the same object as a JSON string")], { error: METADATA_ACCEPTED })
  .transform((v, ctx) => {
    if (typeof v !== "string") return v;
    const deep = tooDeep(v);
    if (deep) {
      ctx.addIssue({ code: "custom", message: `${METADATA_ACCEPTED}; the string holds ${deep}` });
      return z.NEVER;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: `${METADATA_ACCEPTED}; the string is not valid JSON (${(err as Error).message})` });
      return z.NEVER;
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      ctx.addIssue({
        code: "custom",
        message: `${METADATA_ACCEPTED}; the string holds ${Array.isArray(parsed) ? "an array" : `a JSON ${parsed === null ? "null" : typeof parsed}`}`,
      });
      return z.NEVER;
    }
    return parsed as Record<string, unknown>;
  })
  .describe("the document's metadata: a JSON object (or a string holding one); see the metadata rules in the README");

const FILTER_MAX = 8192;
/** What a filter sent as something else than a string reads as, when it can be said. */
function filterMessage(input: unknown): string {
  const accepted = "expected a filter string in encoded-query syntax, e.g. status=open^priority=2 (see /docs/filters)";
  if (Array.isArray(input)) return `${accepted}, not a list: join conditions with ^ (AND) or ^OR`;
  if (input === null || typeof input !== "object") return accepted;
  const entries = Object.entries(input);
  const scalar = entries.every(([, v]) => typeof v === "string" || typeof v === "number" || typeof v === "boolean");
  const same =
    scalar && entries.length > 0 ? `; this object written as a filter is ${entries.map(([k, v]) => `${k}=${String(v)}`).join("^")}` : "";
  return `${accepted}, not a JSON object${same}`;
}
/** A filter in ServiceNow encoded-query syntax, e.g. `status=open^priority=2`. */
const filter = z
  .string({ error: (iss) => filterMessage(iss.input) })
  .max(FILTER_MAX, { error: `expected a filter of at most ${FILTER_MAX} characters` })
  .describe("filter in ServiceNow encoded-query syntax, e.g. `status=open^priority=2`; see [the filter language](/docs/filters)");
/** The default of `k`, the number of chunks a search returns. */
export const DEFAULT_K = 4;

export const loadQuery = z.object({
  collection_name: collectionName.describe("the collection, made on first load"),
  doc_id: docId.optional().describe("the document's id; default `metadata.sys_id`, else a new UUID. An existing id is replaced"),
  wait: flag
    .optional()
    .describe(
      "`true` (or `1`, or empty): answer once the document is searchable or failed (200), or after WAIT_TIMEOUT_MS with its status (202)",
    ),
});

export const loadTextBody = z.object({
  text: z
    .string({ error: "expected the document's text, a non-empty string" })
    .min(1, { error: "expected the document's text, a non-empty string" }),
  metadata: metadataInput.optional(),
});

const bulkItem = loadTextBody.extend({ doc_id: docId.optional() });
export const bulkLoadBody = z.object({
  documents: z
    .array(
      z.strictObject(bulkItem.shape, {
        error: (iss) => (iss.code === "unrecognized_keys" ? unknownKeys(iss.keys, Object.keys(bulkItem.shape), "field") : undefined),
      }),
      {
        error: "expected a JSON array of documents, each {text, metadata, doc_id}",
      },
    )
    .min(1, { error: "expected 1 to 1000 documents" })
    .max(1000, { error: "expected 1 to 1000 documents (a fixed limit per request)" }),
});

const NAMES_ACCEPTED = "expected collection names: a JSON array, or names repeated or comma-separated in the query string";
/** Repeated or comma-separated: `?collection_names=a&collection_names=b` or `?collection_names=a,b`. */
const nameList = z
  .union([z.string(), z.array(z.string())], { error: NAMES_ACCEPTED })
  .transform((v) =>
    (Array.isArray(v) ? v : [v])
      .flatMap((s) => s.split(","))
      .map((s) => s.trim())
      .filter(Boolean),
  )
  .pipe(
    z
      .array(collectionName)
      .min(1, { error: "expected at least one collection name; to search every collection, leave collection_names out" })
      .max(100, { error: "expected at most 100 collection names (a fixed limit)" }),
  );

const QUERY_ACCEPTED = { error: "expected the search text, 1 to 4096 characters" };

/** The search's input; `maxK` is the server's MAX_K: a bad k is told the real bound, and the document carries it. */
export const searchInput = (maxK: number) =>
  z.object({
    query: z.string(QUERY_ACCEPTED).trim().min(1, QUERY_ACCEPTED).max(4096, QUERY_ACCEPTED).describe("the text to search for"),
    k: integer(1, maxK, "MAX_K").default(DEFAULT_K).describe(`how many chunks to return, at most ${maxK} (MAX_K)`),
    collection_names: nameList.optional().describe("collections to search, repeated or comma-separated; all when omitted"),
    metadata: filter.optional(),
  });

const limit = integer(1, 1000)
  .optional()
  .describe(
    "page size; the answer's `next_cursor` continues the list. Without it, every item comes in one answer, streamed, and `next_cursor` is null",
  );
const cursor = z
  .string({ error: "expected the next_cursor of the previous page" })
  .max(512, { error: "expected the next_cursor of the previous page" })
  .optional()
  .describe("the `next_cursor` of the previous page; without `limit`, every item after it");

export const tagInput = z.object({
  collection_name: collectionName,
  tag_info: filter.optional(),
  limit,
  cursor,
});

const STATUS_ACCEPTED = { error: "expected one of queued, processing, ready, failed, pending (queued or processing)" };

export const listDocumentsQuery = z.object({
  collection_name: collectionName,
  status: z
    .enum(["queued", "processing", "ready", "failed", "pending"], STATUS_ACCEPTED)
    .optional()
    .describe("only documents with this ingestion status (pending: queued or processing)"),
  tag_info: filter
    .optional()
    .describe("only documents whose metadata match this filter (encoded query, no ORDERBY: the list is in doc_id order)"),
  limit,
  cursor,
});

export const chunksQuery = z.object({ collection_name: collectionName, id_value: docId, limit, cursor });

export const documentQuery = z.object({ collection_name: collectionName, id_value: docId });
export const collectionQuery = z.object({ collection_name: collectionName });

const warnings = z.array(z.string()).optional().describe("present when the filter has values that look like typos (see the README)");

const metadataOut = z.record(z.string(), z.unknown());

export const loadResponse = z.object({
  collection_name: z.string(),
  doc_id: z.string(),
  job_id: z.string(),
  version: z.number().int(),
  status: z.enum(["queued", "processing", "ready", "failed"]),
  chunks: z.number().int().optional(),
  error: z.string().nullable().optional(),
});

export const documentStatus = loadResponse.extend({
  metadata: metadataOut,
  filename: z.string().nullable(),
  content_type: z.string(),
  size: z.number().int(),
  sha256: z.string(),
  chunks: z.number().int(),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** Where a chunk is: its offsets in the extracted text and its citation, as a search and a chunk list give it. */
const chunkPlace = {
  start: z.number().int().describe("offset of the chunk in the extracted text"),
  end: z.number().int(),
  page: z.number().int().optional().describe("PDF page where the chunk starts"),
  sheet: z.string().optional().describe("spreadsheet sheet"),
  slide: z.number().int().optional().describe("presentation slide"),
  heading_path: z.array(z.string()).optional().describe("the headings above the chunk, outermost first"),
};

export const searchResponse = z.object({
  warnings,
  results: z.array(
    z.object({
      doc_id: z.string(),
      collection_name: z.string(),
      chunk_index: z.number().int(),
      text: z.string(),
      score: z.number(),
      metadata: metadataOut,
      ...chunkPlace,
    }),
  ),
});

export const contentResponse = z.object({
  warnings,
  documents: z.array(z.object({ doc_id: z.string(), collection_name: z.string(), metadata: metadataOut, text: z.string() })),
  next_cursor: z.string().nullable(),
});

export const documentListResponse = z.object({
  collection_name: z.string(),
  documents: z.array(
    z.object({
      doc_id: z.string(),
      name: z.string(),
      status: z.string(),
      version: z.number().int(),
      chunks: z.number().int(),
      size: z.number().int().describe("bytes of the file or text loaded"),
      content_type: z.string(),
      error: z.string().nullable().describe("why the document failed, when it did"),
      updated_at: z.string(),
    }),
  ),
  next_cursor: z.string().nullable(),
});

export const chunksResponse = z.object({
  collection_name: z.string(),
  doc_id: z.string(),
  status: z.enum(["queued", "processing", "ready", "failed"]).describe("of the document's latest version"),
  version: z.number().int().nullable().describe("the version whose chunks are shown: the one searched; null when none is indexed"),
  chunks: z.array(
    z.object({
      chunk_index: z.number().int(),
      text: z.string(),
      ...chunkPlace,
    }),
  ),
  next_cursor: z.string().nullable(),
});

export const collectionListResponse = z.object({
  collections: z.array(
    z.object({
      name: z.string(),
      documents: z.number().int(),
      ready: z.number().int(),
      pending: z.number().int().describe("queued or processing"),
      failed: z.number().int(),
    }),
  ),
});

export const deleteDocumentResponse = z.object({ deleted: z.literal(true), collection_name: z.string(), doc_id: z.string() });
export const deleteCollectionResponse = z.object({ deleted: z.literal(true), collection_name: z.string(), documents: z.number().int() });

export const doctorQuery = z.object({
  repair: flag.optional().describe("`true` (or `1`, or empty): repair what disagrees; default: report only"),
  collection_name: collectionName.optional().describe("check this collection only; default: every collection the token may use"),
});

const count = z.number().int().min(0);
const perKind = <K extends string>(kinds: Record<K, string>, what: string) =>
  z
    .object(
      Object.fromEntries(Object.entries(kinds).map(([k, meaning]) => [k, count.describe(meaning as string)])) as Record<K, typeof count>,
    )
    .describe(what);

export const doctorResponse = z.object({
  repair: z.boolean().describe("whether repairs were made (false: report only)"),
  checked: z.object({
    collections: count,
    documents: count.describe("catalog records"),
    index_documents: count.describe("documents the index holds"),
    blobs: count.describe("raw copies in the blob store"),
  }),
  found: perKind(DISAGREEMENTS, "disagreements found, per kind"),
  repaired: perKind(DISAGREEMENTS, "of those, the ones repaired"),
  unrepaired: count.describe("disagreements found and not repaired (every one without `repair`): 0 means the stores agree, or agree now"),
  unrepairable: perKind(UNREPAIRABLE, "found, but nothing can repair them (not counted in `unrepaired`)"),
  examples: z
    .array(
      z.object({
        kind: z.enum([...Object.keys(DISAGREEMENTS), ...Object.keys(UNREPAIRABLE)] as [string, ...string[]]),
        collection_name: z.string(),
        doc_id: z.string().nullable().describe("null for a raw copy no document names"),
        detail: z.string().describe("what disagreed"),
        action: z.string().describe("what was done, or why nothing was"),
      }),
    )
    .describe("the first findings (at most 50), as examples; the counts cover all of them"),
  examples_omitted: count.describe("findings left out of `examples`"),
  seconds: z.number().min(0).describe("how long the run took"),
});

/**
 * RFC 9457 problem details, as problem.ts sends them. Open, as the RFC wants (clients ignore
 * members they do not know), but every member docstore sends is listed here: openapi.test.ts
 * checks the bodies of the errors it provokes against this schema closed.
 */
export const problem = z
  .looseObject({
    type: z.string().describe("`about:blank`: the status and title say what kind of problem it is"),
    title: z.string().describe("the status's standard phrase"),
    status: z.number().int().min(400).max(599).describe("the HTTP status, repeated"),
    detail: z.string().describe("what was wrong with this request, and what is accepted"),
    instance: z.string().optional().describe("the path of the request; absent when the request could not be read"),
    request_id: z.string().describe("also the X-Request-Id header; quote it when asking about a failure"),
    position: z.number().int().min(0).optional().describe("0-based offset of a filter error in the filter string"),
    media_type: z
      .string()
      .optional()
      .describe("with a 415: the media type refused, an upload's detected type or the Content-Type a body was declared with"),
  })
  .describe("RFC 9457 problem details");

/** A value for a message: JSON, cut short. */
export function shown(value: unknown): string {
  const json = typeof value === "number" && !Number.isFinite(value) ? String(value) : (JSON.stringify(value) ?? String(value));
  return json.length > 80 ? `${json.slice(0, 80)}…` : json;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const key of path) v = v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[key] : undefined;
  return v;
}

/**
 * Validates, and reports the first problems precisely: each names the parameter, what was
 * expected (with the setting behind a bound) and what was received, e.g.
 * `k: expected an integer from 1 to 100 (the server's MAX_K); received "abc"`.
 */
export function parse<T extends z.ZodType>(schema: T, input: unknown, where: string): z.infer<T> {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  const details = new Map<string, string>();
  for (const i of result.error.issues) {
    const path = i.path.length > 0 ? i.path.join(".") : where;
    if (details.has(path)) continue;
    // The value as sent: what zod saw may already be coerced (a query string's "abc" is NaN).
    const sent = valueAt(input, i.path);
    const received = sent !== undefined ? sent : i.input;
    if (i.code === "unrecognized_keys") details.set(path, `${path}: ${i.message}`);
    else if (received === undefined) details.set(path, `${path}: is required; ${i.message}`);
    else details.set(path, `${path}: ${i.message}; received ${shown(received)}`);
  }
  throw new BadRequestError([...details.values()].slice(0, 5).join("; "));
}
