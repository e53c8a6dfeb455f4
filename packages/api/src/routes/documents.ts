/**
 * A collection's documents, listed with what the console shows of each and selected by status
 * and metadata filter, and one document's chunks as indexed.
 */
import {
  BadRequestError,
  NotFoundError,
  decodeCursor,
  documentCursor,
  encodeCursor,
  matchesFilter,
  type Catalog,
  type DocumentRecord,
} from "@docstore/shared";
import { sendJson, streamList } from "../stream.ts";
import { principalOf } from "../access.ts";
import { unknownCollections } from "../unknown-collection.ts";
import type { AppContext } from "../context.ts";
import { citationFields } from "../citations.ts";
import { route, type Route } from "../route.ts";
import * as s from "../schemas.ts";
import { filterOf, typos } from "./search.ts";

/** Documents read from the catalog per step when a list is streamed whole or selected. */
const SCAN_PAGE = 500;

const listed = (d: DocumentRecord) => ({
  doc_id: d.docId,
  name: d.filename ?? d.docId,
  status: d.status,
  version: d.version,
  chunks: d.chunks,
  size: d.size,
  content_type: d.contentType,
  error: d.error,
  updated_at: d.updatedAt,
});

type Keep = ((d: DocumentRecord) => boolean) | null;

/** The selected documents after `cursor`, in doc_id order, a catalog page at a time (a batch may be empty). */
async function* scan(
  catalog: Catalog,
  collection: string,
  cursor: string | null,
  keep: Keep,
  page: number,
): AsyncGenerator<DocumentRecord[]> {
  let at = cursor;
  do {
    const read = await catalog.listDocuments(collection, page, at);
    yield keep ? read.items.filter(keep) : read.items;
    at = read.next;
  } while (at !== null);
}

export function documentRoutes(ctx: AppContext): Route[] {
  const { catalog, index } = ctx.services;

  return [
    route({
      method: "get",
      path: "/get_list_of_documents_names",
      summary:
        "Documents of a collection with their status, optionally selected by status and metadata filter: all of them, streamed, or a page with limit and cursor",
      description:
        "Without `limit`, every selected document comes in one answer, streamed a catalog page at a time (after `cursor`, when given), and " +
        "`next_cursor` is null; with it, a page of `limit` selected documents, and `next_cursor` continues. `tag_info` selects by metadata " +
        "(the filter language, without ORDERBY: the list is in doc_id order) and `status` by status (`pending` is queued or processing).",
      tag: "Collections",
      scope: "read",
      query: s.listDocumentsQuery,
      response: s.documentListResponse,
      problems: { 404: "the collection does not exist" },
      example: {
        query: { collection_name: "kb", limit: 100 },
        response: {
          collection_name: "kb",
          documents: [
            {
              doc_id: "INC001",
              name: "INC001",
              status: "ready",
              version: 1,
              chunks: 1,
              size: 41,
              content_type: "text/plain",
              error: null,
              updated_at: "2025-05-06T09:12:44.120Z",
            },
          ],
          next_cursor: null,
        },
      },
      async handle({ query: q, req, res }) {
        if (!(await catalog.collectionExists(q.collection_name)))
          throw await unknownCollections(ctx, principalOf(req), [q.collection_name]);
        const filter = filterOf(q.tag_info, "tag_info");
        if (filter.orderBy.length > 0)
          throw new BadRequestError("tag_info: ORDERBY is not accepted here: documents are listed in doc_id order");
        const warnings = await typos(ctx, filter, [q.collection_name], "tag_info");
        const status = q.status;
        const byStatus = (d: DocumentRecord) =>
          status === undefined || d.status === status || (status === "pending" && (d.status === "queued" || d.status === "processing"));
        const keep: Keep =
          status === undefined && filter.groups.length === 0 ? null : (d) => byStatus(d) && matchesFilter(filter, d.metadata);
        const cursor = q.cursor ?? null;
        if (cursor !== null) decodeCursor(cursor, "string"); // a bad cursor is a 400 before the answer starts
        if (q.limit === undefined) {
          const pages = async function* () {
            for await (const batch of scan(catalog, q.collection_name, cursor, keep, SCAN_PAGE)) yield batch.map(listed);
          };
          await streamList(req, res, { collection_name: q.collection_name, warnings }, "documents", pages(), { next_cursor: null });
          return;
        }
        // One selected document past the page tells whether another page follows.
        const found: DocumentRecord[] = [];
        for await (const batch of scan(catalog, q.collection_name, cursor, keep, keep ? SCAN_PAGE : q.limit + 1)) {
          found.push(...batch);
          if (found.length > q.limit) break;
        }
        const items = found.slice(0, q.limit);
        const next = found.length > q.limit ? documentCursor(items.at(-1)!.docId) : null;
        sendJson(res, { collection_name: q.collection_name, warnings, documents: items.map(listed), next_cursor: next });
      },
    }),
    route({
      method: "get",
      path: "/get_document_chunks",
      summary: "A document's chunks as indexed, in order, with their offsets and citations: all of them, or a page with limit and cursor",
      description:
        "`version` is the version whose chunks are shown (the one searches see; null while none is indexed) and `status` that of the " +
        "document's latest version.",
      tag: "Collections",
      scope: "read",
      query: s.chunksQuery,
      response: s.chunksResponse,
      problems: { 404: "the document (or its collection) does not exist" },
      example: {
        query: { collection_name: "kb", id_value: "a1b2c3", limit: 2 },
        response: {
          collection_name: "kb",
          doc_id: "a1b2c3",
          status: "ready",
          version: 1,
          chunks: [{ chunk_index: 0, text: "Runbook. Restart the replica when lag grows.", start: 0, end: 44, heading_path: ["Runbook"] }],
          next_cursor: null,
        },
      },
      async handle({ query: q, res }) {
        const record = await catalog.get(q.collection_name, q.id_value);
        if (!record) throw new NotFoundError(`unknown document ${q.id_value} in collection ${q.collection_name}`);
        const indexed = await index.documentChunks(q.collection_name, q.id_value);
        const all = indexed?.chunks ?? [];
        const offset = q.cursor === undefined ? 0 : decodeCursor(q.cursor, "number");
        const end = q.limit === undefined ? all.length : offset + q.limit;
        sendJson(res, {
          collection_name: q.collection_name,
          doc_id: q.id_value,
          status: record.status,
          version: indexed?.version ?? null,
          chunks: all
            .slice(offset, end)
            .map((c) => ({ chunk_index: c.chunkIndex, text: c.text, start: c.start, end: c.end, ...citationFields(c.citation) })),
          next_cursor: end < all.length ? encodeCursor(end) : null,
        });
      },
    }),
  ];
}
