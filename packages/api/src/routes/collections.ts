import { NotFoundError } from "@docstore/shared";
import type { AppContext } from "../context.ts";
import { statusResponse } from "../documents.ts";
import { route, type Route } from "../route.ts";
import * as s from "../schemas.ts";

export function collectionRoutes(ctx: AppContext): Route[] {
  const { catalog, index, blobs } = ctx.services;

  const mustExist = async (name: string) => {
    if (!(await catalog.collectionExists(name))) throw new NotFoundError(`unknown collection: ${name}`);
  };

  return [
    route({
      method: "get",
      path: "/get_list_of_collection",
      summary: "Collections with their document counts",
      scope: "read",
      response: s.collectionListResponse,
      async handle({ res }) {
        res.json({ collections: await catalog.listCollections() });
      },
    }),
    route({
      method: "get",
      path: "/get_document_status",
      summary: "Ingestion status and details of one document",
      scope: "read",
      query: s.documentQuery,
      response: s.documentStatus,
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
      scope: "write",
      query: s.documentQuery,
      response: s.deleteDocumentResponse,
      // The catalog row goes first: a job still running for this document then finds itself
      // superseded and removes what it indexed, so a deleted document cannot come back.
      async handle({ query: q, res }) {
        const record = await catalog.delete(q.collection_name, q.id_value);
        if (!record) throw unknownDocument(q);
        await index.deleteDocument(q.collection_name, q.id_value);
        await blobs.delete(record.blobKey);
        res.json({ deleted: true, collection_name: q.collection_name, doc_id: q.id_value });
      },
    }),
    route({
      method: "delete",
      path: "/delete_collection",
      summary: "Delete a collection and all its documents",
      scope: "admin",
      query: s.collectionQuery,
      response: s.deleteCollectionResponse,
      async handle({ query: q, res }) {
        await mustExist(q.collection_name);
        const documents = await catalog.deleteCollection(q.collection_name);
        await index.deleteCollection(q.collection_name);
        await blobs.deletePrefix(`${q.collection_name}/`);
        res.json({ deleted: true, collection_name: q.collection_name, documents });
      },
    }),
  ];
}

const unknownDocument = (q: { collection_name: string; id_value: string }) =>
  new NotFoundError(`unknown document ${q.id_value} in collection ${q.collection_name}`);
