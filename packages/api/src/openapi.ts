import { z } from "zod";
import type { Route } from "./route.ts";
import * as s from "./schemas.ts";

type Json = Record<string, unknown>;
type Operation = Json & { summary: string };
export type OpenApiDocument = ReturnType<typeof openApiDocument>;

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
  if (route.multipart) {
    const { file, fields } = route.multipart;
    const properties: Json = { [file]: { type: "string", format: "binary" } };
    for (const [name, description] of Object.entries(fields)) properties[name] = { type: "string", description };
    return { required: true, content: { "multipart/form-data": { schema: { type: "object", required: [file], properties } } } };
  }
  if (body) return { required: true, content: { "application/json": { schema: schema(body, "input") } } };
  return undefined;
}

const problemResponse = { description: "problem details", content: { "application/problem+json": { schema: schema(s.problem, "output") } } };

function operation(route: Route): Operation {
  const { query, body } = placement(route);
  const success = { description: "success", content: { [route.contentType ?? "application/json"]: { schema: schema(route.response, "output") } } };
  const out: Operation = {
    summary: route.summary,
    parameters: parameters(query),
    responses: { [String(route.status ?? 200)]: success, "4XX": problemResponse, "503": problemResponse },
  };
  if (route.scope) out.security = [{ bearer: [route.scope] }];
  const request = requestBody(route, body);
  if (request) out.requestBody = request;
  return out;
}

/** The OpenAPI 3.1 document of the routes, from the same fields and zod schemas they are served with. */
export function openApiDocument(routes: readonly Route[]) {
  const paths: Record<string, Record<string, Operation>> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method] = operation(route);
  return {
    openapi: "3.1.0",
    info: { title: "docstore", version: "0.1.0", description: "Document collections for retrieval-augmented generation." },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    paths,
  };
}
