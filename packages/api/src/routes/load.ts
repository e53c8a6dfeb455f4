import type { Response } from "express";
import { z } from "zod";
import { BadRequestError, parseMetadata, parseMetadataJson, type DocumentRecord } from "@docstore/shared";
import type { AppContext } from "../context.ts";
import { acceptDocument, loadResponse, waitForSettled } from "../documents.ts";
import { route, type Route } from "../route.ts";
import * as s from "../schemas.ts";

/** 202 while queued; 200 once `?wait=true` saw the document ready or failed. */
async function reply(ctx: AppContext, res: Response, records: DocumentRecord[], wait: boolean, single: boolean) {
  const final = wait ? await waitForSettled(ctx, records) : records;
  const done = final.every((r) => r.status === "ready" || r.status === "failed");
  const body = single ? loadResponse(final[0]!) : { documents: final.map(loadResponse) };
  res.status(wait && done ? 200 : 202).json(body);
}

export function loadRoutes(ctx: AppContext): Route[] {
  return [
    route({
      method: "post",
      path: "/load_document_to_collection",
      summary: "Upload a file with JSON metadata into a collection",
      scope: "write",
      query: s.loadQuery,
      multipart: { file: "file", fields: { metadata: "JSON object" } },
      response: s.loadResponse,
      status: 202,
      async handle({ query, file, req, res }) {
        const raw = (req.body as Record<string, unknown> | undefined)?.metadata;
        if (raw !== undefined && typeof raw !== "string") {
          throw new BadRequestError(`metadata: received ${Array.isArray(raw) ? `${raw.length} fields named metadata` : "a value that is not text"}; accepted: one form field 'metadata' holding a JSON object`);
        }
        const record = await acceptDocument(ctx, {
          collection: query.collection_name,
          docId: query.doc_id,
          metadata: raw === undefined || raw.trim() === "" ? {} : parseMetadataJson(raw),
          bytes: file.buffer,
          filename: file.originalname,
          declaredType: file.mimetype,
        });
        await reply(ctx, res, [record], query.wait ?? false, true);
      },
    }),
    route({
      method: "post",
      path: "/load_text_to_collection",
      summary: "Load a plain text with JSON metadata into a collection",
      scope: "write",
      query: s.loadQuery,
      body: s.loadTextBody,
      response: s.loadResponse,
      status: 202,
      async handle({ query, body, res }) {
        const record = await acceptDocument(ctx, {
          collection: query.collection_name,
          docId: query.doc_id,
          metadata: parseMetadata(body.metadata ?? {}),
          bytes: Buffer.from(body.text, "utf8"),
          contentType: "text/plain",
        });
        await reply(ctx, res, [record], query.wait ?? false, true);
      },
    }),
    route({
      method: "post",
      path: "/load_texts_to_collection",
      summary: "Load up to 1000 texts in one request (batch jobs)",
      scope: "write",
      query: s.loadQuery.omit({ doc_id: true }),
      body: s.bulkLoadBody,
      response: z.object({ documents: z.array(s.loadResponse) }),
      status: 202,
      async handle({ query, body, res }) {
        // Validate every document before storing any, so a bad one rejects the whole request.
        const inputs = body.documents.map((d, i) => {
          try {
            return { docId: d.doc_id, metadata: parseMetadata(d.metadata ?? {}), bytes: Buffer.from(d.text, "utf8") };
          } catch (err) {
            if (err instanceof BadRequestError) throw new BadRequestError(`documents.${i}.${err.message}`);
            throw err;
          }
        });
        const accept = (input: (typeof inputs)[number]) => acceptDocument(ctx, { ...input, collection: query.collection_name, contentType: "text/plain" });
        // All at once, so that their blobs and catalog rows share the group commit's transactions;
        // one after another when a document id repeats, so that the last text given wins.
        const ids = inputs.map((input) => input.docId ?? input.metadata.sys_id).filter((id) => id !== undefined);
        let records: DocumentRecord[];
        if (new Set(ids).size === ids.length) records = await Promise.all(inputs.map(accept));
        else {
          records = [];
          for (const input of inputs) records.push(await accept(input));
        }
        await reply(ctx, res, records, query.wait ?? false, false);
      },
    }),
  ];
}
