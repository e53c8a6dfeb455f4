import { NotFoundError } from "@docstore/shared";
import { principalOf, visibleTo, type Principal } from "../access.ts";
import { audit } from "../audit.ts";
import type { AppContext } from "../context.ts";
import { knownFields } from "../known-fields.ts";
import { statusResponse } from "../documents.ts";
import { route, type Route } from "../route.ts";
import { unknownCollections } from "../unknown-collection.ts";
import * as s from "../schemas.ts";

export function collectionRoutes(ctx: AppContext): Route[] {
  const { catalog, index, blobs } = ctx.services;

  const mustExist = async (name: string, principal: Principal) => {
    if (!(await catalog.collectionExists(name))) throw await unknownCollections(ctx, principal, [name]);
  };

  return [
    route({
      method: "get",
      path: "/get_list_of_collection",
      summary: "Collections with their document counts (a token restricted to some collections sees only those)",
      tag: "Collections",
      scope: "read",
      response: s.collectionListResponse,
      example: { response: { collections: [{ name: "kb", documents: 2, ready: 2, pending: 0, failed: 0 }] } },
      async handle({ req, res }) {
        res.json({ collections: visibleTo(principalOf(req), await catalog.listCollections(), (c) => c.name) });
      },
    }),
    route({
      method: "get",
      path: "/get_document_status",
      summary: "Ingestion status and details of one document",
      tag: "Collections",
      scope: "read",
      query: s.documentQuery,
      response: s.documentStatus,
      problems: { 404: "the document (or its collection) does not exist" },
      example: {
        query: { collection_name: "kb", id_value: "a1b2c3" },
        response: {
          collection_name: "kb",
          doc_id: "a1b2c3",
          job_id: "0196b9d8-5c1e-7cc4-9a61-4f0f7d1e2a10",
          version: 1,
          status: "ready",
          chunks: 1,
          error: null,
          metadata: { sys_id: "a1b2c3", type: "runbook", priority: 2 },
          filename: "runbook.md",
          content_type: "text/markdown",
          size: 38,
          sha256: "5d0f6b1c0e3a4f2b8c7d9e1f0a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d",
          created_at: "2025-05-06T09:12:44.087Z",
          updated_at: "2025-05-06T09:12:44.120Z",
        },
      },
      async handle({ query: q, res }) {
        const record = await catalog.get(q.collection_name, q.id_value);
        if (!record) throw unknownDocument(q);
        res.json(statusResponse(record));
      },
    }),
    route({
      method: "delete",
      path: "/delete_document_from_collection",
      summary: "Delete one document",
      description: "A document deleted while it is still queued or being indexed does not come back.",
      tag: "Collections",
      scope: "write",
      query: s.documentQuery,
      response: s.deleteDocumentResponse,
      problems: { 404: "the document (or its collection) does not exist" },
      example: {
        query: { collection_name: "kb", id_value: "a1b2c3" },
        response: { deleted: true, collection_name: "kb", doc_id: "a1b2c3" },
      },
      // The catalog row goes first: a job still running for this document then finds itself
      // superseded and removes what it indexed, so a deleted document cannot come back.
      async handle({ query: q, req, res }) {
        const record = await catalog.delete(q.collection_name, q.id_value);
        if (!record) throw unknownDocument(q);
        audit(req, "document.deleted", { collection: q.collection_name, doc_id: q.id_value, version: record.version });
        await index.deleteDocument(q.collection_name, q.id_value);
        await blobs.delete(record.blobKey);
        res.json({ deleted: true, collection_name: q.collection_name, doc_id: q.id_value });
      },
    }),
    route({
      method: "delete",
      path: "/delete_collection",
      summary: "Delete a collection and all its documents",
      tag: "Collections",
      scope: "admin",
      query: s.collectionQuery,
      response: s.deleteCollectionResponse,
      problems: { 404: "the collection does not exist" },
      example: { query: { collection_name: "kb" }, response: { deleted: true, collection_name: "kb", documents: 1 } },
      async handle({ query: q, req, res }) {
        await mustExist(q.collection_name, principalOf(req));
        const documents = await catalog.deleteCollection(q.collection_name);
        knownFields(catalog).forget(q.collection_name);
        audit(req, "collection.deleted", { collection: q.collection_name, documents });
        await index.deleteCollection(q.collection_name);
        await blobs.deletePrefix(`${q.collection_name}/`);
        res.json({ deleted: true, collection_name: q.collection_name, documents });
      },
    }),
  ];
}

const unknownDocument = (q: { collection_name: string; id_value: string }) =>
  new NotFoundError(`unknown document ${q.id_value} in collection ${q.collection_name}`);
