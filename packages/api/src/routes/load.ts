import type { Response } from "express";
import { z } from "zod";
import { BadRequestError, parseMetadata, parseMetadataJson, type DocumentRecord } from "@docstore/shared";
import type { AppContext } from "../context.ts";
import { acceptDocuments, loadResponse, waitForSettled } from "../documents.ts";
import { route, type Route } from "../route.ts";
import * as s from "../schemas.ts";

/** 202 while queued; 200 once `?wait=true` saw the document ready or failed. */
async function reply(ctx: AppContext, res: Response, records: DocumentRecord[], wait: boolean, single: boolean) {
  const final = wait ? await waitForSettled(ctx, records) : records;
  const done = final.every((r) => r.status === "ready" || r.status === "failed");
  const body = single ? loadResponse(final[0]!) : { documents: final.map(loadResponse) };
  res.status(wait && done ? 200 : 202).json(body);
}

const waited = { 200: "with `wait=true`: the document is searchable (`ready`) or `failed` (`error` says why)" };

const STORAGE_FULL =
  "no space left under DATA_DIR (or over a quota): nothing was stored; retry after `Retry-After` seconds, once space is freed";

const DOC_ID_CHOICE =
  "The `doc_id` is the `doc_id` parameter if given, else `metadata.sys_id`, else a new UUID; loading an existing one replaces that document.";

export function loadRoutes(ctx: AppContext): Route[] {
  return [
    route({
      method: "post",
      path: "/load_document_to_collection",
      summary: "Upload a file with JSON metadata into a collection",
      description:
        "Multipart form with a `file` and an optional `metadata` field holding a JSON object. The type is detected from the bytes " +
        "(PDF, DOCX, ODT, XLSX, PPTX, HTML, Markdown, plain text, CSV/TSV, JSON, NDJSON, RTF, EML); anything else is a 415. " +
        DOC_ID_CHOICE,
      tag: "Loading",
      scope: "write",
      query: s.loadQuery,
      multipart: { file: "file", fields: { metadata: "JSON object, as text" } },
      response: s.loadResponse,
      status: 202,
      alsoAnswers: waited,
      problems: {
        413: "the file is over MAX_UPLOAD_BYTES",
        415: "a file type docstore does not read (`media_type` names the type detected)",
        507: STORAGE_FULL,
      },
      example: {
        query: { collection_name: "kb" },
        body: { metadata: '{"sys_id":"a1b2c3","type":"runbook","priority":2}' },
        response: {
          collection_name: "kb",
          doc_id: "a1b2c3",
          job_id: "0196b9d8-5c1e-7cc4-9a61-4f0f7d1e2a10",
          version: 1,
          status: "queued",
          chunks: 0,
          error: null,
        },
      },
      async handle({ query, file, req, res }) {
        const raw = (req.body as Record<string, unknown> | undefined)?.metadata;
        if (raw !== undefined && typeof raw !== "string") {
          throw new BadRequestError(
            `metadata: received ${Array.isArray(raw) ? `${raw.length} fields named metadata` : "a value that is not text"}; accepted: one form field 'metadata' holding a JSON object`,
          );
        }
        const records = await acceptDocuments(ctx, [
          {
            collection: query.collection_name,
            docId: query.doc_id,
            metadata: raw === undefined || raw.trim() === "" ? {} : parseMetadataJson(raw),
            bytes: file.buffer,
            filename: file.originalname,
            declaredType: file.mimetype,
          },
        ]);
        await reply(ctx, res, records, query.wait ?? false, true);
      },
    }),
    route({
      method: "post",
      path: "/load_text_to_collection",
      summary: "Load a plain text with JSON metadata into a collection",
      description: DOC_ID_CHOICE,
      tag: "Loading",
      scope: "write",
      query: s.loadQuery,
      body: s.loadTextBody,
      response: s.loadResponse,
      status: 202,
      alsoAnswers: waited,
      problems: { 507: STORAGE_FULL },
      example: {
        query: { collection_name: "kb", wait: "true" },
        body: { text: "Database outage in the billing cluster", metadata: { sys_id: "INC001", status: "open", priority: 1 } },
        response: {
          collection_name: "kb",
          doc_id: "INC001",
          job_id: "0196b9d8-6f02-7a3e-8d4b-2b9e51c0f7a3",
          version: 1,
          status: "ready",
          chunks: 1,
          error: null,
        },
      },
      async handle({ query, body, res }) {
        const records = await acceptDocuments(ctx, [
          {
            collection: query.collection_name,
            docId: query.doc_id,
            metadata: parseMetadata(body.metadata ?? {}),
            bytes: Buffer.from(body.text, "utf8"),
            contentType: "text/plain",
          },
        ]);
        await reply(ctx, res, records, query.wait ?? false, true);
      },
    }),
    route({
      method: "post",
      path: "/load_texts_to_collection",
      summary: "Load up to 1000 texts in one request (batch jobs)",
      description:
        "Each document as in `load_text_to_collection`, with its own optional `doc_id`; one invalid document rejects the whole request, and none is stored.",
      tag: "Loading",
      scope: "write",
      query: s.loadQuery.omit({ doc_id: true }),
      body: s.bulkLoadBody,
      response: z.object({ documents: z.array(s.loadResponse) }),
      status: 202,
      alsoAnswers: { 200: "with `wait=true`: every document is searchable (`ready`) or `failed`" },
      problems: { 507: STORAGE_FULL },
      example: {
        query: { collection_name: "kb" },
        body: { documents: [{ doc_id: "INC002", text: "Replica lag", metadata: { status: "open" } }, { text: "Printer jam" }] },
        response: {
          documents: [
            {
              collection_name: "kb",
              doc_id: "INC002",
              job_id: "0196b9d8-7a10-7b2c-a3f1-0c4d6e8f9a1b",
              version: 1,
              status: "queued",
              chunks: 0,
              error: null,
            },
            {
              collection_name: "kb",
              doc_id: "0196b9d8-7a10-7b2c-a3f1-1d5e7f9a0b2c",
              job_id: "0196b9d8-7a10-7b2c-a3f1-2e6f8a0b1c3d",
              version: 1,
              status: "queued",
              chunks: 0,
              error: null,
            },
          ],
        },
      },
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
        // Recorded together and in order (see acceptDocuments): all or none, the last text of a doc_id given twice.
        const records = await acceptDocuments(
          ctx,
          inputs.map((input) => ({ ...input, collection: query.collection_name, contentType: "text/plain" as const })),
        );
        await reply(ctx, res, records, query.wait ?? false, false);
      },
    }),
  ];
}
