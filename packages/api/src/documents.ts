import { createHash } from "node:crypto";
import {
  BadRequestError,
  DOC_ID,
  DOC_ID_RULE,
  SUPPORTED_TYPES,
  StorageError,
  UnsupportedMediaTypeError,
  blobKeyFor,
  detectType,
  uuidv7,
  type Catalog,
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

/** doc_id: the query parameter, else metadata.sys_id, else a new UUID (docs/api.md), time-ordered. */
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
    throw new UnsupportedMediaTypeError(
      `file: ${err.message}; accepted: ${SUPPORTED_TYPES.join(", ")}`,
      typeof received === "string" ? received : undefined,
    );
  }
}

type Accepted = Awaited<ReturnType<Catalog["accept"]>>;

/** A record the filesystem refused: its transaction wrote nothing. */
const refused = (a: PromiseSettledResult<Accepted>) => a.status === "rejected" && a.reason instanceof StorageError;

/**
 * Stores the raw bytes of each document, records each new version as queued and hands it to
 * the queue. The records of a request are submitted together, in order, and catalogs apply
 * writes in the order submitted (SQLite's group commit in one transaction, Redis one
 * connection's commands in turn), so a doc_id given twice ends with its last text. If one
 * cannot be recorded, none is kept: SQLite refuses the whole transaction for lack of space, and
 * after any other failure the records made are put back. Their jobs are queued in one call; if
 * that fails, every record is put back too (the request answers 503, and keeps nothing).
 */
export async function acceptDocuments(ctx: AppContext, inputs: Incoming[]): Promise<DocumentRecord[]> {
  const { blobs, catalog, queue } = ctx.services;
  // Named and typed first: a 400 or a 415 stores nothing.
  const docs = inputs.map((input) => {
    const jobId = uuidv7();
    return {
      input,
      docId: chooseDocId(input),
      contentType: input.contentType ?? typeOf(input),
      jobId,
      blobKey: blobKeyFor(input.collection, jobId),
    };
  });
  const removeBlobs = (keys: string[]) =>
    Promise.all(keys.map((key) => blobs.delete(key).catch((err: unknown) => ctx.logger.warn({ err, key }, "orphan blob not removed"))));

  const stored = await Promise.allSettled(docs.map((d) => blobs.put(d.blobKey, d.input.bytes)));
  const notStored = stored.find((s) => s.status === "rejected");
  if (notStored) {
    await removeBlobs(docs.filter((_, i) => stored[i]!.status === "fulfilled").map((d) => d.blobKey));
    throw notStored.reason;
  }

  // In one turn of the event loop, in order: one group commit.
  const accepted = await Promise.allSettled(
    docs.map(({ input, docId, contentType, jobId, blobKey }) =>
      catalog.accept({
        collection: input.collection,
        docId,
        jobId,
        metadata: input.metadata,
        filename: input.filename ?? null,
        contentType,
        blobKey,
        size: input.bytes.byteLength,
        sha256: createHash("sha256").update(input.bytes).digest("hex"),
      }),
    ),
  );
  const notAccepted = accepted.find((a) => a.status === "rejected");
  if (notAccepted) {
    // Put back what was there before those recorded, the latest first (a doc_id given twice),
    // together. A blob goes only where nothing names it: a record refused by the filesystem
    // wrote nothing, but one lost with a connection may have been written.
    const latestFirst = accepted.flatMap((a) => (a.status === "fulfilled" ? [a.value] : [])).reverse();
    const undone = await Promise.allSettled(latestFirst.map(({ record, previous }) => catalog.rollback(record, previous)));
    const unused = [
      ...latestFirst.filter((_, i) => undone[i]!.status === "fulfilled").map(({ record }) => record.blobKey),
      ...docs.filter((_, i) => refused(accepted[i]!)).map((d) => d.blobKey),
    ];
    await removeBlobs(unused);
    throw notAccepted.reason;
  }

  const records = accepted.map((a) => (a as PromiseFulfilledResult<Accepted>).value);
  try {
    await queue.enqueue(records.map(({ record: r }) => ({ collection: r.collection, docId: r.docId, version: r.version, jobId: r.jobId })));
  } catch (err) {
    // No job, no document, for all of them: a 503 must not leave some of the request behind.
    // A job that was queued before the failure finds its version gone and is skipped.
    const latestFirst = [...records].reverse();
    const undone = await Promise.allSettled(latestFirst.map(({ record, previous }) => catalog.rollback(record, previous)));
    await removeBlobs(latestFirst.filter((_, i) => undone[i]!.status === "fulfilled").map(({ record }) => record.blobKey));
    throw err;
  }
  for (const { record, previous } of records) {
    if (previous && previous.blobKey !== record.blobKey) {
      blobs.delete(previous.blobKey).catch((err: unknown) => ctx.logger.warn({ err, key: previous.blobKey }, "old blob not removed"));
    }
  }
  return records.map(({ record }) => record);
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
        return now && now.version === r.version
          ? now
          : { ...r, status: "failed" as const, error: "replaced or deleted before it was indexed" };
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
