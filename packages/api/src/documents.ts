import { createHash } from "node:crypto";
import { v7 as uuidv7 } from "uuid";
import {
  BadRequestError,
  DOC_ID,
  DOC_ID_RULE,
  SUPPORTED_TYPES,
  UnsupportedMediaTypeError,
  blobKeyFor,
  detectType,
  type DocumentRecord,
  type Metadata,
  type SupportedType,
} from "@docstore/shared";
import type { AppContext } from "./context.ts";

export interface Incoming {
  collection: string;
  docId?: string;
  metadata: Metadata;
  bytes: Uint8Array;
  filename?: string;
  declaredType?: string;
  /** Known without looking: a text sent as JSON is plain text, whatever it resembles. */
  contentType?: SupportedType;
}

/** doc_id: the query parameter, else metadata.sys_id, else a new UUID (DESIGN.md), time-ordered. */
function chooseDocId(input: Incoming): string {
  if (input.docId !== undefined) return input.docId;
  const sysId = input.metadata.sys_id;
  if (typeof sysId === "string") {
    if (!DOC_ID.test(sysId)) throw new BadRequestError(`metadata.sys_id: used as the document id, it must be ${DOC_ID_RULE}`);
    return sysId;
  }
  return uuidv7();
}

/** What the upload is; a refusal (415) lists what is accepted. */
function typeOf(input: Incoming): SupportedType {
  try {
    return detectType({ bytes: input.bytes, filename: input.filename, declaredType: input.declaredType });
  } catch (err) {
    if (!(err instanceof UnsupportedMediaTypeError)) throw err;
    const received = err.extras.media_type;
    throw new UnsupportedMediaTypeError(`file: ${err.message}; accepted: ${SUPPORTED_TYPES.join(", ")}`, typeof received === "string" ? received : undefined);
  }
}

/** Stores the raw bytes, records the new version as queued and hands it to the queue. */
export async function acceptDocument(ctx: AppContext, input: Incoming): Promise<DocumentRecord> {
  const { blobs, catalog, queue } = ctx.services;
  const docId = chooseDocId(input);
  const contentType = input.contentType ?? typeOf(input);
  const jobId = uuidv7();
  const blobKey = blobKeyFor(input.collection, jobId);
  await blobs.put(blobKey, input.bytes);
  const { record, previous } = await catalog.accept({
    collection: input.collection,
    docId,
    jobId,
    metadata: input.metadata,
    filename: input.filename ?? null,
    contentType,
    blobKey,
    size: input.bytes.byteLength,
    sha256: createHash("sha256").update(input.bytes).digest("hex"),
  });
  try {
    await queue.enqueue({ collection: record.collection, docId, version: record.version, jobId });
  } catch (err) {
    // No job, no document: put back what was there, so a 503 leaves nothing half-written.
    await catalog.rollback(record, previous);
    await blobs.delete(blobKey).catch((e: unknown) => ctx.logger.warn({ err: e, key: blobKey }, "orphan blob not removed"));
    throw err;
  }
  if (previous && previous.blobKey !== blobKey) {
    blobs.delete(previous.blobKey).catch((err: unknown) => ctx.logger.warn({ err, key: previous.blobKey }, "old blob not removed"));
  }
  return record;
}

const settled = (r: DocumentRecord) => r.status === "ready" || r.status === "failed";

/** For `?wait=true`: polls until each version is ready or failed, replaced, deleted, or time runs out. */
export async function waitForSettled(ctx: AppContext, records: DocumentRecord[]): Promise<DocumentRecord[]> {
  const deadline = Date.now() + ctx.config.waitTimeoutMs;
  let current = records;
  let delay = 5;
  while (!current.every(settled) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 100);
    current = await Promise.all(
      current.map(async (r) => {
        if (settled(r)) return r;
        const now = await ctx.services.catalog.get(r.collection, r.docId);
        return now && now.version === r.version ? now : { ...r, status: "failed" as const, error: "replaced or deleted before it was indexed" };
      }),
    );
  }
  return current;
}

export function loadResponse(r: DocumentRecord) {
  return {
    collection_name: r.collection,
    doc_id: r.docId,
    job_id: r.jobId,
    version: r.version,
    status: r.status,
    chunks: r.chunks,
    error: r.error,
  };
}

export function statusResponse(r: DocumentRecord) {
  return {
    ...loadResponse(r),
    metadata: r.metadata,
    filename: r.filename,
    content_type: r.contentType,
    size: r.size,
    sha256: r.sha256,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}
