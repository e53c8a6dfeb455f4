import { Router, type Request, type Response } from "express";
import { NotFoundError } from "@docstore/shared";
import type { AppContext } from "../context.ts";
import { requireScope } from "../auth.ts";
import { statusResponse } from "../documents.ts";
import { collectionQuery, documentQuery, listDocumentsQuery, parse } from "../schemas.ts";

const DEFAULT_PAGE = 100;

export function collectionRoutes(ctx: AppContext): Router {
  const router = Router();
  const read = requireScope(ctx.authenticate, "read");
  const write = requireScope(ctx.authenticate, "write");
  const admin = requireScope(ctx.authenticate, "admin");
  const { catalog, index, blobs } = ctx.services;

  const mustExist = async (name: string) => {
    if (!(await catalog.collectionExists(name))) throw new NotFoundError(`unknown collection: ${name}`);
  };

  router.get("/get_list_of_collection", read, async (_req: Request, res: Response) => {
    res.json({ collections: await catalog.listCollections() });
  });

  router.get("/get_list_of_documents_names", read, async (req: Request, res: Response) => {
    const q = parse(listDocumentsQuery, req.query, "query");
    await mustExist(q.collection_name);
    const page = await catalog.listDocuments(q.collection_name, q.limit ?? DEFAULT_PAGE, q.cursor ?? null);
    res.json({
      collection_name: q.collection_name,
      documents: page.items.map((d) => ({
        doc_id: d.docId,
        name: d.filename ?? d.docId,
        status: d.status,
        version: d.version,
        chunks: d.chunks,
        updated_at: d.updatedAt,
      })),
      next_cursor: page.next,
    });
  });

  router.get("/get_document_status", read, async (req: Request, res: Response) => {
    const q = parse(documentQuery, req.query, "query");
    const record = await catalog.get(q.collection_name, q.id_value);
    if (!record) throw new NotFoundError(`unknown document ${q.id_value} in collection ${q.collection_name}`);
    res.json(statusResponse(record));
  });

  // The catalog row goes first: a job still running for this document then finds itself
  // superseded and removes what it indexed, so a deleted document cannot come back.
  router.delete("/delete_document_from_collection", write, async (req: Request, res: Response) => {
    const q = parse(documentQuery, req.query, "query");
    const record = await catalog.delete(q.collection_name, q.id_value);
    if (!record) throw new NotFoundError(`unknown document ${q.id_value} in collection ${q.collection_name}`);
    await index.deleteDocument(q.collection_name, q.id_value);
    await blobs.delete(record.blobKey);
    res.json({ deleted: true, collection_name: q.collection_name, doc_id: q.id_value });
  });

  router.delete("/delete_collection", admin, async (req: Request, res: Response) => {
    const q = parse(collectionQuery, req.query, "query");
    await mustExist(q.collection_name);
    const documents = await catalog.deleteCollection(q.collection_name);
    await index.deleteCollection(q.collection_name);
    await blobs.deletePrefix(`${q.collection_name}/`);
    res.json({ deleted: true, collection_name: q.collection_name, documents });
  });

  return router;
}
