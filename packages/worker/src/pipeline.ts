import {
  AppError,
  NotFoundError,
  chunkText,
  extractText,
  type BlobStore,
  type Catalog,
  type ChunkInput,
  type DocumentRecord,
  type IndexedDocument,
  type IngestJob,
  type Logger,
  type SearchIndex,
  type SupportedType,
} from "@docstore/shared";

export interface PipelineDeps {
  catalog: Catalog;
  blobs: BlobStore;
  index: SearchIndex;
  logger: Logger;
  chunking: { chunkTokens: number; overlapTokens: number };
}

interface Prepared {
  record: DocumentRecord;
  doc: IndexedDocument;
  chunks: ChunkInput[];
}

/** Thrown for a document that can never be indexed as it is; anything else is retried. */
class DocumentFailure extends Error {}

/**
 * Ingests a batch: load each blob, extract, chunk, then index all of them in one write.
 * A job whose version is no longer current (re-loaded or deleted meanwhile) is skipped, and a
 * version indexed while it was being deleted is removed again, so deletes always win.
 */
export async function ingestBatch(jobs: IngestJob[], deps: PipelineDeps): Promise<void> {
  const prepared: Prepared[] = [];
  for (const job of jobs) {
    const record = await deps.catalog.get(job.collection, job.docId);
    if (!record || record.version !== job.version) continue;
    try {
      prepared.push(await prepare(record, deps));
    } catch (err) {
      if (!(err instanceof DocumentFailure)) throw err;
      deps.logger.warn({ collection: job.collection, docId: job.docId, reason: err.message }, "document failed");
      await deps.catalog.markFailed(job.collection, job.docId, job.version, err.message);
    }
  }
  if (prepared.length === 0) return;
  const applied = await deps.index.indexDocuments(prepared.map(({ doc, chunks }) => ({ doc, chunks })));
  for (const [i, { record, chunks }] of prepared.entries()) {
    if (!applied[i]) continue;
    const stillCurrent = await deps.catalog.markReady(record.collection, record.docId, record.version, chunks.length);
    if (!stillCurrent) await deps.index.deleteDocument(record.collection, record.docId, record.version);
  }
}

async function prepare(record: DocumentRecord, deps: PipelineDeps): Promise<Prepared> {
  let bytes: Uint8Array;
  try {
    bytes = await deps.blobs.get(record.blobKey);
  } catch (err) {
    if (err instanceof NotFoundError) throw new DocumentFailure("raw content missing from the blob store");
    throw err;
  }
  let text: string;
  try {
    text = extractText(bytes, record.contentType as SupportedType);
  } catch (err) {
    const reason = err instanceof AppError || err instanceof Error ? err.message : String(err);
    throw new DocumentFailure(`text extraction failed: ${reason}`);
  }
  const chunks = chunkText(text, deps.chunking);
  if (chunks.length === 0) throw new DocumentFailure("no extractable text");
  return {
    record,
    doc: { collection: record.collection, docId: record.docId, version: record.version, metadata: record.metadata, text },
    chunks: chunks.map(({ index, text: t, start, end }) => ({ index, text: t, start, end })),
  };
}
