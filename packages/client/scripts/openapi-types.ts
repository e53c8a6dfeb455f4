/**
 * Turns the service's /openapi.json into the client's TypeScript types. Only what a call's
 * types depend on is kept: paths, methods, parameters, request bodies and success responses.
 * Descriptions, summaries, examples, operation ids, error responses and components are dropped
 * (references are inlined first), so that documentation changes leave the types, and the drift
 * test in test/client.test.ts, alone, while a renamed field or a new operation does not.
 */
import openapiTS, { astToString } from "openapi-typescript";

type Json = Record<string, unknown>;

/** Keys that document rather than shape. */
const PROSE = new Set([
  "description",
  "summary",
  "example",
  "examples",
  "operationId",
  "title",
  "$schema",
  "$comment",
  "externalDocs",
  "tags",
  "default",
  "security",
]);
/** Keys whose value maps names (a property, a status, a media type) to objects: their keys are data, never prose. */
const MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "paths", "responses", "content", "headers", "schemas"]);

function resolve(doc: Json, ref: string): unknown {
  if (!ref.startsWith("#/")) throw new Error(`openapi: only local references are supported, got ${ref}`);
  let node: unknown = doc;
  for (const part of ref.slice(2).split("/")) node = (node as Json | undefined)?.[part.replaceAll("~1", "/").replaceAll("~0", "~")];
  if (node === undefined) throw new Error(`openapi: unresolved reference ${ref}`);
  return node;
}

/** A copy without prose and with every local $ref inlined (the service's schemas are not recursive). */
function strip(doc: Json, node: unknown, isMap = false, depth = 0): unknown {
  if (depth > 64) throw new Error("openapi: schema nested too deep (a recursive reference?)");
  if (Array.isArray(node)) return node.map((n) => strip(doc, n, false, depth + 1));
  if (node === null || typeof node !== "object") return node;
  const obj = node as Json;
  if (!isMap && typeof obj.$ref === "string") return strip(doc, resolve(doc, obj.$ref), false, depth + 1);
  const out: Json = {};
  for (const [key, value] of Object.entries(obj)) {
    if (!isMap && PROSE.has(key)) continue;
    out[key] = strip(doc, value, !isMap && MAPS.has(key), depth + 1);
  }
  return out;
}

const isSuccess = (status: string) => /^2(\d\d|XX)$/.test(status);

/** The part of the document the client's types are made from. */
export function normalize(document: Json): Json {
  const paths: Json = {};
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    // The document itself is not an operation of the API.
    if (path === "/openapi.json") continue;
    for (const [method, op] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const operation = op as Json;
      const responses = Object.fromEntries(Object.entries((operation.responses ?? {}) as Json).filter(([status]) => isSuccess(status)));
      // Pages and metrics (HTML, plain text) are for browsers and scrapers, not for this client.
      const json = Object.values(responses).some((r) => Object.keys(((r as Json).content ?? {}) as Json).includes("application/json"));
      if (!json) continue;
      ((paths[path] ??= {}) as Json)[method] = strip(document, { ...operation, responses });
    }
  }
  return { openapi: document.openapi, info: { title: "docstore", version: "0" }, paths };
}

export const HEADER = `/**
 * The service's operations as TypeScript types, generated from its /openapi.json by
 * \`pnpm --filter @docstore/client generate\`; do not edit. test/client.test.ts fails when the
 * running service's document no longer gives this file.
 */
`;

/** The generated module's text for a document. */
export async function generateTypes(document: Json): Promise<string> {
  const ast = await openapiTS(normalize(document) as never, { alphabetize: false, exportType: false });
  return HEADER + astToString(ast);
}
