/**
 * The requests of the hostile-input table (test/hostile-cases.ts): every operation as a valid
 * request into which a case puts its one fault (OPS), sent by fetch or over a bare socket, and
 * the pieces the cases build bodies from.
 */
import { head, rawRequest } from "./raw-http.ts";

export interface Target {
  url: string;
  token: string;
  /** A collection holding `docId`, so that a valid name never hides an error behind a 404. */
  collection: string;
  docId: string;
  maxUploadBytes: number;
  maxBodyBytes: number;
}

export interface Answer {
  status: number;
  contentType: string | undefined;
  body: any;
  /** Over a bare socket: resolves when the server has closed the connection. */
  closed?: Promise<void>;
}

export interface Case {
  op: string;
  name: string;
  status: number;
  /** Takes seconds (a timeout) or many megabytes: run once, in the embedded mode. */
  costly?: boolean;
  send(t: Target): Promise<Answer>;
}

export type Query = Record<string, string | string[] | undefined>;
export interface Parts {
  query?: Query;
  /** Sent as is; a string is sent as UTF-8. */
  body?: string | Buffer | FormData;
  contentType?: string;
  headers?: Record<string, string>;
  token?: string | null;
}

function target(_t: Target, path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) for (const item of v === undefined ? [] : Array.isArray(v) ? v : [v]) params.append(k, item);
  const qs = params.toString();
  return `${path}${qs ? `?${qs}` : ""}`;
}

/** One request by fetch, or by socket for a GET with a body (fetch refuses to send one). */
export async function http(t: Target, method: string, path: string, p: Parts = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...p.headers };
  const token = p.token === undefined ? t.token : p.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (p.contentType !== undefined) headers["content-type"] = p.contentType;
  const where = target(t, path, p.query);
  if (method === "GET" && p.body !== undefined && !(p.body instanceof FormData)) {
    const bytes = Buffer.from(p.body);
    const r = await rawRequest(
      t.url,
      Buffer.concat([Buffer.from(head(method, where, { ...headers, "content-length": bytes.length, connection: "close" })), bytes]),
    );
    return { status: r.status, contentType: r.headers["content-type"], body: r.body };
  }
  const res = await fetch(new URL(where, t.url), { method, headers, body: p.body as RequestInit["body"] });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, contentType: res.headers.get("content-type") ?? undefined, body };
}

export const JSON_TYPE = "application/json";
export const json = (value: unknown) => ({ body: JSON.stringify(value), contentType: JSON_TYPE });
export const textFile = (text = "a small text about herons") => new Blob([text], { type: "text/plain" });
export function form(parts: [string, string | Blob, string?][]): FormData {
  const f = new FormData();
  for (const [name, value, filename] of parts) {
    if (typeof value === "string") f.append(name, value);
    else f.append(name, value, filename ?? "a.txt");
  }
  return f;
}

export const deepArrays = (n: number) => "[".repeat(n) + "]".repeat(n);
export const deepObjects = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);

/** A multipart boundary, and one part of a form written by hand. */
export const B = "XBOUNDARYX";
export const MULTIPART = `multipart/form-data; boundary=${B}`;
export const part = (name: string, value: string, filename?: string) =>
  `--${B}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"\r\nContent-Type: text/plain` : ""}\r\n\r\n${value}\r\n`;

/** Each operation's method and path. */
export const ROUTES = {
  load_document: ["POST", "/load_document_to_collection"],
  load_text: ["POST", "/load_text_to_collection"],
  load_texts: ["POST", "/load_texts_to_collection"],
  search_get: ["GET", "/get_relevant_documents"],
  search_post: ["POST", "/get_relevant_documents"],
  tag_get: ["GET", "/get_content_by_tag"],
  tag_post: ["POST", "/get_content_by_tag"],
  list_documents: ["GET", "/get_list_of_documents_names"],
  list_collections: ["GET", "/get_list_of_collection"],
  status: ["GET", "/get_document_status"],
  delete_document: ["DELETE", "/delete_document_from_collection"],
  delete_collection: ["DELETE", "/delete_collection"],
  doctor: ["POST", "/doctor"],
} as const;
export type Op = keyof typeof ROUTES;

/** Every operation as a valid request, into which a case puts its one fault. */
export const OPS: Record<Op, (t: Target, p?: Parts) => Promise<Answer>> = {
  load_document: (t: Target, p: Parts = {}) =>
    http(t, ...ROUTES.load_document, {
      body: form([["file", textFile()]]),
      ...p,
      query: { collection_name: t.collection, ...p.query },
    }),
  load_text: (t: Target, p: Parts = {}) =>
    http(t, ...ROUTES.load_text, { ...json({ text: "hello" }), ...p, query: { collection_name: t.collection, ...p.query } }),
  load_texts: (t: Target, p: Parts = {}) =>
    http(t, ...ROUTES.load_texts, {
      ...json({ documents: [{ text: "hello" }] }),
      ...p,
      query: { collection_name: t.collection, ...p.query },
    }),
  search_get: (t: Target, p: Parts = {}) =>
    http(t, ...ROUTES.search_get, { ...p, query: { query: "herons", collection_names: t.collection, ...p.query } }),
  search_post: (t: Target, p: Parts = {}) =>
    http(t, ...ROUTES.search_post, {
      ...json({ collection_names: [t.collection] }),
      ...p,
      query: { query: "herons", ...p.query },
    }),
  tag_get: (t: Target, p: Parts = {}) => http(t, ...ROUTES.tag_get, { ...p, query: { collection_name: t.collection, ...p.query } }),
  tag_post: (t: Target, p: Parts = {}) =>
    http(t, ...ROUTES.tag_post, { ...json({ tag_info: "" }), ...p, query: { collection_name: t.collection, ...p.query } }),
  list_documents: (t: Target, p: Parts = {}) =>
    http(t, ...ROUTES.list_documents, { ...p, query: { collection_name: t.collection, ...p.query } }),
  list_collections: (t: Target, p: Parts = {}) => http(t, ...ROUTES.list_collections, p),
  status: (t: Target, p: Parts = {}) =>
    http(t, ...ROUTES.status, { ...p, query: { collection_name: t.collection, id_value: t.docId, ...p.query } }),
  delete_document: (t: Target, p: Parts = {}) =>
    http(t, ...ROUTES.delete_document, {
      ...p,
      query: { collection_name: t.collection, id_value: "no-such-doc", ...p.query },
    }),
  delete_collection: (t: Target, p: Parts = {}) =>
    http(t, ...ROUTES.delete_collection, { ...p, query: { collection_name: "no-such-collection", ...p.query } }),
  doctor: (t: Target, p: Parts = {}) => http(t, ...ROUTES.doctor, { ...p, query: { collection_name: "no-such-collection", ...p.query } }),
};
export const ALL_OPS = Object.keys(OPS) as Op[];

/** One request over a bare socket, for what fetch cannot send. */
export function socket(t: Target, request: string | Buffer, options?: Parameters<typeof rawRequest>[2]): Promise<Answer> {
  return rawRequest(t.url, request, options).then((r) => ({
    status: r.status,
    contentType: r.headers["content-type"],
    body: r.body,
    closed: r.closed,
  }));
}
export const auth = (t: Target) => ({ authorization: `Bearer ${t.token}` });

/** A list of cases, and the function that adds one. */
export function caseList() {
  const cases: Case[] = [];
  const add = (op: string, name: string, status: number, send: Case["send"], costly = false) =>
    cases.push({ op, name, status, send, costly });
  return { cases, add };
}
