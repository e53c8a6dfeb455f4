import { z } from "zod";
import * as s from "./schemas.ts";

type Json = Record<string, unknown>;
interface Operation {
  summary: string;
  scope?: "read" | "write" | "admin";
  query?: z.ZodObject;
  body?: z.ZodType;
  multipart?: boolean;
  response: z.ZodType;
  status?: number;
}

const schema = (t: z.ZodType, io: "input" | "output"): Json =>
  z.toJSONSchema(t, { io, unrepresentable: "any", target: "draft-2020-12" }) as Json;

function parameters(query: z.ZodObject | undefined): Json[] {
  if (!query) return [];
  return Object.entries(query.shape).map(([name, field]) => ({
    name,
    in: "query",
    required: !(field as z.ZodType).safeParse(undefined).success,
    schema: schema(field as z.ZodType, "input"),
  }));
}

const problemResponse = { description: "problem details", content: { "application/problem+json": { schema: schema(s.problem, "output") } } };

function operation(op: Operation): Json {
  const out: Json = {
    summary: op.summary,
    parameters: parameters(op.query),
    responses: {
      [String(op.status ?? 200)]: { description: "success", content: { "application/json": { schema: schema(op.response, "output") } } },
      "4XX": problemResponse,
      "503": problemResponse,
    },
  };
  if (op.scope) out.security = [{ bearer: [op.scope] }];
  if (op.body) out.requestBody = { required: true, content: { "application/json": { schema: schema(op.body, "input") } } };
  if (op.multipart) {
    out.requestBody = {
      required: true,
      content: {
        "multipart/form-data": {
          schema: {
            type: "object",
            required: ["file"],
            properties: { file: { type: "string", format: "binary" }, metadata: { type: "string", description: "JSON object" } },
          },
        },
      },
    };
  }
  return out;
}

const searchQuery = s.searchInput.pick({ query: true, k: true, collection_names: true, metadata: true });
const searchBody = s.searchInput.pick({ collection_names: true, metadata: true }).partial();
const tagBody = s.tagInput.pick({ tag_info: true }).partial();

/** The OpenAPI 3.1 document, generated from the same zod schemas the routes validate with. */
export function openApiDocument() {
  const ops: Record<string, Record<string, Operation>> = {
    "/load_document_to_collection": {
      post: { summary: "Upload a file with JSON metadata into a collection", scope: "write", query: s.loadQuery, multipart: true, response: s.loadResponse, status: 202 },
    },
    "/load_text_to_collection": {
      post: { summary: "Load a plain text with JSON metadata into a collection", scope: "write", query: s.loadQuery, body: s.loadTextBody, response: s.loadResponse, status: 202 },
    },
    "/load_texts_to_collection": {
      post: { summary: "Load up to 1000 texts in one request (batch jobs)", scope: "write", query: s.loadQuery.omit({ doc_id: true }), body: s.bulkLoadBody, response: z.object({ documents: z.array(s.loadResponse) }), status: 202 },
    },
    "/get_relevant_documents": {
      get: { summary: "Search chunks by text and metadata filter across collections", scope: "read", query: searchQuery, response: s.searchResponse },
      post: { summary: "Search (filter and collections in the JSON body)", scope: "read", query: s.searchInput.pick({ query: true, k: true }), body: searchBody, response: s.searchResponse },
    },
    "/get_content_by_tag": {
      get: { summary: "Documents whose metadata match a filter", scope: "read", query: s.tagInput, response: s.contentResponse },
      post: { summary: "Documents whose metadata match a filter (filter in the JSON body)", scope: "read", query: s.tagInput.omit({ tag_info: true }), body: tagBody, response: s.contentResponse },
    },
    "/get_list_of_documents_names": {
      get: { summary: "Documents of a collection with their status, paginated", scope: "read", query: s.listDocumentsQuery, response: s.documentListResponse },
    },
    "/get_list_of_collection": {
      get: { summary: "Collections with their document counts", scope: "read", response: s.collectionListResponse },
    },
    "/get_document_status": {
      get: { summary: "Ingestion status and details of one document", scope: "read", query: s.documentQuery, response: s.documentStatus },
    },
    "/delete_document_from_collection": {
      delete: { summary: "Delete one document", scope: "write", query: s.documentQuery, response: s.deleteDocumentResponse },
    },
    "/delete_collection": {
      delete: { summary: "Delete a collection and all its documents", scope: "admin", query: s.collectionQuery, response: s.deleteCollectionResponse },
    },
    "/healthz": { get: { summary: "Liveness probe (no token)", response: z.object({ status: z.literal("ok") }) } },
    "/metrics": { get: { summary: "Prometheus metrics (text exposition format)", scope: "read", response: z.string() } },
    "/readyz": { get: { summary: "Readiness probe: dependencies reachable (no token)", response: z.object({ status: z.string(), checks: z.record(z.string(), z.string()) }) } },
  };
  const paths: Record<string, Record<string, Json & { summary: string }>> = {};
  for (const [path, methods] of Object.entries(ops)) {
    paths[path] = Object.fromEntries(Object.entries(methods).map(([m, op]) => [m, operation(op) as Json & { summary: string }]));
  }
  return {
    openapi: "3.1.0",
    info: { title: "docstore", version: "0.1.0", description: "Document collections for retrieval-augmented generation." },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    paths,
  };
}
