import { z } from "zod";
import { COLLECTION_NAME_RULE, SUPPORTED_TYPES } from "@docstore/shared";
import { RETRY_AFTER_SECONDS, statusTitle } from "./problem.ts";
import type { Route } from "./route.ts";
import * as s from "./schemas.ts";

type Json = Record<string, unknown>;
type Operation = Json & { summary: string; operationId: string };
export type OpenApiDocument = ReturnType<typeof openApiDocument>;

/** The settings the document quotes: what it says of sizes is what the service enforces. */
export interface DocumentLimits {
  maxUploadBytes: number;
  maxBodyBytes: number;
}

/**
 * Drops what zod adds that says nothing to a reader: each schema's `$schema`, the bounds of a
 * safe integer that every `.int()` carries, and the `anyOf` of a schema that states its type
 * (an integer parameter of schemas.ts, read from a number or a string holding one: readers
 * and typed clients are to send the integer, not see `integer | (number | string)`).
 */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (node === null || typeof node !== "object") return node;
  const out: Json = {};
  const typed = "type" in node;
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema" && typeof value === "string") continue;
    if (key === "anyOf" && typed) continue;
    if (key === "minimum" && value === Number.MIN_SAFE_INTEGER) continue;
    if (key === "maximum" && value === Number.MAX_SAFE_INTEGER) continue;
    out[key] = tidy(value);
  }
  return out;
}

const schema = (t: z.ZodType, io: "input" | "output"): Json =>
  tidy(z.toJSONSchema(t, { io, unrepresentable: "any", target: "draft-2020-12" })) as Json;

function parameters(query: z.ZodObject | undefined, examples: Record<string, unknown> | undefined): Json[] {
  if (!query) return [];
  return Object.entries(query.shape).map(([name, field]) => {
    // The description belongs to the parameter, where readers and tools look for it.
    const { description, ...rest } = schema(field as z.ZodType, "input");
    const parameter: Json = { name, in: "query", required: !(field as z.ZodType).safeParse(undefined).success };
    if (description) parameter.description = description;
    parameter.schema = rest;
    if (examples?.[name] !== undefined) parameter.example = examples[name];
    return parameter;
  });
}

/** Where the document shows a route's input: `queryInBody` fields go to a JSON body, each optional. */
function placement(route: Route): { query?: z.ZodObject; body?: z.ZodType } {
  if (!route.query || !route.queryInBody) return { query: route.query, body: route.body };
  const inBody = new Set(route.queryInBody);
  const fields = Object.entries(route.query.shape);
  const query = z.object(Object.fromEntries(fields.filter(([name]) => !inBody.has(name))));
  const body = z.object(Object.fromEntries(fields.filter(([name]) => inBody.has(name)))).partial();
  return { query, body: inBody.size > 0 ? body : undefined };
}

function requestBody(route: Route, body: z.ZodType | undefined): Json | undefined {
  const example = route.example?.body === undefined ? {} : { example: route.example.body };
  if (route.multipart) {
    const { file, fields } = route.multipart;
    const given = (route.example?.body ?? {}) as Record<string, unknown>;
    const properties: Json = { [file]: { type: "string", format: "binary", description: "the file; its type is detected from its bytes" } };
    for (const [name, description] of Object.entries(fields)) {
      properties[name] = { type: "string", description, ...(given[name] === undefined ? {} : { examples: [given[name]] }) };
    }
    return { required: true, content: { "multipart/form-data": { schema: { type: "object", required: [file], properties } } } };
  }
  // A body of query fields is optional: they may all come in the query string.
  const required = route.body !== undefined;
  if (body) return { required, content: { "application/json": { schema: schema(body, "input"), ...example } } };
  return undefined;
}

const PROBLEM_REF = { $ref: "#/components/schemas/Problem" };

/** A problem answer, with an example body of the kind the service sends for it. */
const RETRY_AFTER_HEADER: Json = {
  "Retry-After": {
    description: `seconds to wait before retrying (${RETRY_AFTER_SECONDS})`,
    required: true,
    schema: { type: "integer", minimum: 1 },
  },
};

function problemResponse(
  route: Route,
  status: number,
  description: string,
  detail: string,
  extra: { headers?: Json; members?: Json } = {},
): Json {
  const example = {
    type: "about:blank",
    title: statusTitle(status),
    status,
    detail,
    instance: route.path,
    request_id: "0196b9d8-0f4e-7c2a-9b1d-3e5f7a9c1b2d",
    ...extra.members,
  };
  return {
    description,
    ...(extra.headers ? { headers: extra.headers } : {}),
    content: { "application/problem+json": { schema: PROBLEM_REF, example } },
  };
}

/** A typical message for a route's bad input, true to the messages the service writes. */
function badInput(route: Route): [string, Json?] {
  const fields = Object.keys(route.query?.shape ?? {});
  const filter = fields.find((f) => f === "metadata" || f === "tag_info");
  if (filter) return [`${filter}: priority: expected an integer, got "high" at position 9`, { position: 9 }];
  if (fields.includes("collection_name"))
    return [`collection_name: expected a collection name: ${COLLECTION_NAME_RULE}; received "../etc"`];
  if (fields.length === 0) return ["verbose: unknown query parameter; this operation takes no query parameters"];
  return ["query: is required; expected the search text, 1 to 4096 characters"];
}

/** Example messages of the statuses routes name in `problems`. */
function particular(route: Route, status: number, limits: DocumentLimits): [string, Json?] {
  const document = Object.keys(route.query?.shape ?? {}).includes("id_value");
  switch (status) {
    case 404:
      return [document ? "unknown document a1b2c3 in collection kb" : "unknown collection: kb"];
    case 413:
      return [
        `file: received a file larger than ${limits.maxUploadBytes} bytes (a request of ${limits.maxUploadBytes + 291} bytes); ` +
          `accepted: at most ${limits.maxUploadBytes} bytes (the server's MAX_UPLOAD_BYTES)`,
      ];
    case 415:
      return [`file: unsupported file type image/png; accepted: ${SUPPORTED_TYPES.join(", ")}`, { media_type: "image/png" }];
    case 502:
      return ['embedding request rejected (model "text-embedding-3-small"): 400 maximum context length exceeded'];
    case 507:
      return [
        "no space left under DATA_DIR (catalog.sqlite: database or disk is full, SQLITE_FULL); free space or grow the volume, then retry",
      ];
    default:
      return [statusTitle(status)];
  }
}

function responses(route: Route, limits: DocumentLimits): Json {
  const contentType = route.contentType ?? "application/json";
  const body = (description: string): Json => {
    const media: Json = { schema: schema(route.response, "output") };
    if (route.example?.response !== undefined) media.example = route.example.response;
    return { description, content: { [contentType]: media } };
  };
  const out: Json = { [String(route.status ?? 200)]: body(route.status === 202 ? "accepted" : "success") };
  for (const [status, when] of Object.entries(route.alsoAnswers ?? {})) out[status] = body(when);
  if (route.query || route.body || route.multipart) {
    const [detail, members] = badInput(route);
    const what =
      "bad input: a parameter or field missing, malformed, out of bounds or unknown (the `detail` names it, and the one meant), " +
      "a malformed JSON body or form, or a malformed filter (`position` gives its offset)";
    out["400"] = problemResponse(route, 400, what, detail, { members });
  }
  if (route.scope) {
    out["401"] = problemResponse(
      route,
      401,
      "missing or unknown bearer token",
      "missing bearer token: send 'Authorization: Bearer <token>'",
    );
    out["403"] = problemResponse(route, 403, `the token lacks the '${route.scope}' scope`, `this token lacks the '${route.scope}' scope`);
  }
  for (const [status, when] of Object.entries(route.problems ?? {})) {
    const [detail, members] = particular(route, Number(status), limits);
    out[status] = problemResponse(route, Number(status), when, detail, {
      members,
      ...(status === "507" ? { headers: RETRY_AFTER_HEADER } : {}),
    });
  }
  out["4XX"] = problemResponse(
    route,
    413,
    `another client error: a body over MAX_BODY_BYTES (${limits.maxBodyBytes} bytes; 413), a body that is not JSON ` +
      "(415; for an upload, one that is not multipart/form-data), request headers or URL too large (431)",
    `body: received ${limits.maxBodyBytes + 1} bytes; accepted: a body of at most ${limits.maxBodyBytes} bytes ` +
      "(the server's MAX_BODY_BYTES; MAX_UPLOAD_BYTES for a file sent to /load_document_to_collection)",
  );
  if (route.scope) {
    out["503"] = problemResponse(
      route,
      503,
      "a dependency (catalog, index, blob store or queue) is unavailable: retry after `Retry-After` seconds",
      "blob store unavailable: put kb/0196b9d8-6f02-7a3e-8d4b-2b9e51c0f7a3: connect ECONNREFUSED 10.0.0.7:9000",
      { headers: RETRY_AFTER_HEADER },
    );
  }
  return out;
}

/** `get_relevant_documents`; a path served by several methods names the others `<path>_<method>`. */
function operationId(route: Route, methods: readonly string[]): string {
  const name = route.path.slice(1).replace(/[^A-Za-z0-9]+/g, "_");
  const first = methods.includes("get") ? "get" : methods[0];
  return route.method === first ? name : `${name}_${route.method}`;
}

function operation(route: Route, methods: readonly string[], limits: DocumentLimits): Operation {
  const { query, body } = placement(route);
  const out: Operation = { summary: route.summary, operationId: operationId(route, methods) };
  if (route.description) out.description = route.description;
  if (route.tag) out.tags = [route.tag];
  out.parameters = parameters(query, route.example?.query);
  const request = requestBody(route, body);
  if (request) out.requestBody = request;
  out.responses = responses(route, limits);
  if (route.scope) out.security = [{ bearer: [route.scope] }];
  return out;
}

const description = (limits: DocumentLimits) => `Document collections for retrieval-augmented generation: load files or texts with JSON
metadata into named collections, then search them by text and a metadata filter.

- **Auth**: every operation but the probes and this description needs \`Authorization: Bearer <token>\`
  with a scope: \`read\` for searches and lists, \`write\` for loads and document deletion, \`admin\` for
  collection deletion. Use **Authorize** to try the operations from this page.
- **Filters** (\`metadata\` of a search, \`tag_info\` of a tag lookup) are ServiceNow encoded queries,
  e.g. \`status=open^priority<=2\`: see [the filter language](/docs/filters).
- **Errors** are RFC 9457 problem details (\`application/problem+json\`, schema \`Problem\` below) whose
  \`detail\` names the parameter, what was received and what is accepted; every answer carries an
  \`X-Request-Id\`. Unknown query parameters, fields and form fields are refused (400), never ignored; a
  method a path does not serve is a 405 whose \`Allow\` lists those it does.
- **Lists** (\`get_content_by_tag\`, \`get_list_of_documents_names\`) come whole, streamed, without \`limit\`;
  with it, a page at a time, \`next_cursor\` continuing.
- **Sizes**: an uploaded file may have up to ${limits.maxUploadBytes} bytes (MAX_UPLOAD_BYTES), a JSON body up to
  ${limits.maxBodyBytes} bytes (MAX_BODY_BYTES); beyond, the answer is a 413.`;

/** The OpenAPI 3.1 document of the routes, from the same fields and zod schemas they are served with. */
export function openApiDocument(routes: readonly Route[], limits: DocumentLimits) {
  const methods = new Map<string, string[]>();
  for (const route of routes) methods.set(route.path, [...(methods.get(route.path) ?? []), route.method]);
  const paths: Record<string, Record<string, Operation>> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method] = operation(route, methods.get(route.path)!, limits);
  const tags = [...new Set(routes.flatMap((r) => (r.tag ? [r.tag] : [])))].map((name) => ({ name }));
  return {
    openapi: "3.1.0",
    info: { title: "docstore", version: "0.1.0", description: description(limits) },
    // Relative: the document describes the server it is fetched from, whatever its address.
    servers: [{ url: "/", description: "the server this document was fetched from" }],
    tags,
    paths,
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "a token from API_TOKENS, or the one generated on first start" },
      },
      schemas: { Problem: schema(s.problem, "output") },
    },
  };
}
