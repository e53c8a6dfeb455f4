/**
 * Zod schemas of every request and response. The routes validate with them and openapi.ts
 * turns the same schemas into the OpenAPI document, so the two cannot drift apart.
 */
import { z } from "zod";
import { BadRequestError, COLLECTION_NAME, COLLECTION_NAME_RULE, DOC_ID, DOC_ID_RULE, metadataJsonSchema } from "@docstore/shared";

export const collectionName = z.string().regex(COLLECTION_NAME, `collection name must be ${COLLECTION_NAME_RULE}`);
export const docId = z.string().regex(DOC_ID, `document id must be ${DOC_ID_RULE}`);
const flag = z.enum(["true", "false", "1", "0", ""]).transform((v) => v === "true" || v === "1" || v === "");
// Checked by parseMetadata in the handler; the document shows its rules.
const metadataObject = z.record(z.string(), z.unknown()).meta(metadataJsonSchema());
/** A filter in ServiceNow encoded-query syntax, e.g. `status=open^priority=2`. */
const filter = z.string().max(8192).describe("filter in ServiceNow encoded-query syntax, e.g. `status=open^priority=2`; see [the filter language](/docs/filters)");
/** The default of `k`, the number of chunks a search returns. */
export const DEFAULT_K = 4;
const limit = z.coerce.number().int().min(1).max(1000).describe("page size; the answer's `next_cursor` continues the list");
const cursor = z.string().max(512).describe("the `next_cursor` of the previous page");

export const loadQuery = z.object({
  collection_name: collectionName.describe("the collection, made on first load"),
  doc_id: docId.optional().describe("the document's id; default `metadata.sys_id`, else a new UUID. An existing id is replaced"),
  wait: flag
    .optional()
    .describe("`true` (or `1`, or empty): answer once the document is searchable or failed (200), or after WAIT_TIMEOUT_MS with its status (202)"),
});

export const loadTextBody = z.object({
  text: z.string().min(1, "text must not be empty"),
  metadata: metadataObject.optional(),
});

export const bulkLoadBody = z.object({
  documents: z
    .array(loadTextBody.extend({ doc_id: docId.optional() }))
    .min(1, "documents must not be empty")
    .max(1000, "at most 1000 documents per request"),
});

/** Repeated or comma-separated: `?collection_names=a&collection_names=b` or `?collection_names=a,b`. */
const nameList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(",")).map((s) => s.trim()).filter(Boolean))
  .pipe(z.array(collectionName).max(100));

/** `maxK` is the MAX_K setting: the schema, and so the document, carry the bound in force. */
export const searchInput = (maxK: number) =>
  z.object({
    query: z.string().trim().min(1, "query must not be empty").max(4096).describe("the text to search for"),
    k: z.coerce
      .number()
      .int()
      .min(1, "k must be at least 1")
      .max(maxK, `must be at most ${maxK}`)
      .default(DEFAULT_K)
      .describe(`how many chunks to return, at most ${maxK} (MAX_K)`),
    collection_names: nameList.optional().describe("collections to search, repeated or comma-separated; all when omitted"),
    metadata: filter.optional(),
  });

export const tagInput = z.object({
  collection_name: collectionName,
  tag_info: filter.optional(),
  limit: limit.optional(),
  cursor: cursor.optional(),
});

export const listDocumentsQuery = z.object({
  collection_name: collectionName,
  limit: limit.optional(),
  cursor: cursor.optional(),
});

export const documentQuery = z.object({ collection_name: collectionName, id_value: docId });
export const collectionQuery = z.object({ collection_name: collectionName });

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

export const searchResponse = z.object({
  results: z.array(
    z.object({
      doc_id: z.string(),
      collection_name: z.string(),
      chunk_index: z.number().int(),
      text: z.string(),
      score: z.number(),
      metadata: metadataOut,
      start: z.number().int().describe("offset of the chunk in the extracted text"),
      end: z.number().int(),
      page: z.number().int().optional().describe("PDF page where the chunk starts"),
      sheet: z.string().optional().describe("spreadsheet sheet"),
      slide: z.number().int().optional().describe("presentation slide"),
      heading_path: z.array(z.string()).optional().describe("the headings above the chunk, outermost first"),
    }),
  ),
});

export const contentResponse = z.object({
  documents: z.array(z.object({ doc_id: z.string(), collection_name: z.string(), metadata: metadataOut, text: z.string() })),
  next_cursor: z.string().nullable(),
});

export const documentListResponse = z.object({
  collection_name: z.string(),
  documents: z.array(
    z.object({ doc_id: z.string(), name: z.string(), status: z.string(), version: z.number().int(), chunks: z.number().int(), updated_at: z.string() }),
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
    media_type: z.string().optional().describe("the detected media type of an upload refused with 415"),
  })
  .describe("RFC 9457 problem details");

/** Validates and reports the first problems precisely: `collection_name: collection name must be ...`. */
export function parse<T extends z.ZodType>(schema: T, input: unknown, where: string): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = result.error.issues.slice(0, 5).map((i) => {
    const path = i.path.join(".");
    const message = i.code === "invalid_type" && i.input === undefined ? "is required" : i.message;
    return path ? `${path}: ${message}` : `${where}: ${message}`;
  });
  throw new BadRequestError(details.join("; "));
}
