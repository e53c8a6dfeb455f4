import { Router, type Request, type Response } from "express";
import multer from "multer";
import { BadRequestError, parseMetadata, parseMetadataJson, type DocumentRecord } from "@docstore/shared";
import type { AppContext } from "../context.ts";
import { requireScope } from "../auth.ts";
import { acceptDocument, loadResponse, waitForSettled } from "../documents.ts";
import { bulkLoadBody, loadQuery, loadTextBody, parse } from "../schemas.ts";

/** 202 while queued; 200 once `?wait=true` saw the document ready or failed. */
async function reply(ctx: AppContext, res: Response, records: DocumentRecord[], wait: boolean, single: boolean) {
  const final = wait ? await waitForSettled(ctx, records) : records;
  const done = final.every((r) => r.status === "ready" || r.status === "failed");
  const body = single ? loadResponse(final[0]!) : { documents: final.map(loadResponse) };
  res.status(wait && done ? 200 : 202).json(body);
}

export function loadRoutes(ctx: AppContext): Router {
  const router = Router();
  const write = requireScope(ctx.authenticate, "write");
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: ctx.config.http.maxUploadBytes, files: 1, fields: 8, fieldSize: 1024 * 1024, parts: 16 },
  });

  router.post("/load_text_to_collection", write, async (req: Request, res: Response) => {
    const q = parse(loadQuery, req.query, "query");
    const body = parse(loadTextBody, req.body ?? {}, "body");
    const record = await acceptDocument(ctx, {
      collection: q.collection_name,
      docId: q.doc_id,
      metadata: parseMetadata(body.metadata ?? {}),
      bytes: Buffer.from(body.text, "utf8"),
      contentType: "text/plain",
    });
    await reply(ctx, res, [record], q.wait ?? false, true);
  });

  router.post("/load_texts_to_collection", write, async (req: Request, res: Response) => {
    const q = parse(loadQuery.omit({ doc_id: true }), req.query, "query");
    const body = parse(bulkLoadBody, req.body ?? {}, "body");
    // Validate every document before storing any, so a bad one rejects the whole request.
    const inputs = body.documents.map((d, i) => {
      try {
        return { docId: d.doc_id, metadata: parseMetadata(d.metadata ?? {}), bytes: Buffer.from(d.text, "utf8") };
      } catch (err) {
        throw new BadRequestError(`documents.${i}.${(err as Error).message}`);
      }
    });
    const records: DocumentRecord[] = [];
    for (const input of inputs) {
      records.push(await acceptDocument(ctx, { ...input, collection: q.collection_name, contentType: "text/plain" }));
    }
    await reply(ctx, res, records, q.wait ?? false, false);
  });

  router.post("/load_document_to_collection", write, upload.single("file"), async (req: Request, res: Response) => {
    const q = parse(loadQuery, req.query, "query");
    if (!req.file) throw new BadRequestError("multipart form: field 'file' is required");
    const raw = (req.body as Record<string, unknown> | undefined)?.metadata;
    if (raw !== undefined && typeof raw !== "string") throw new BadRequestError("metadata: send one JSON object as a string field");
    const record = await acceptDocument(ctx, {
      collection: q.collection_name,
      docId: q.doc_id,
      metadata: raw === undefined || raw.trim() === "" ? {} : parseMetadataJson(raw),
      bytes: req.file.buffer,
      filename: req.file.originalname,
      declaredType: req.file.mimetype,
    });
    await reply(ctx, res, [record], q.wait ?? false, true);
  });

  return router;
}
