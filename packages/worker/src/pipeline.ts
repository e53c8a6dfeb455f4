import {
  DocumentError,
  EmbeddingRejectedError,
  NotFoundError,
  StorageError,
  extractText,
  joinSections,
  type Attempt,
  type Extracted,
  type BlobStore,
  type Chunker,
  type Catalog,
  type ChunkInput,
  type DocumentRecord,
  type Embedder,
  type IndexedDocument,
  type ClaimedJob,
  type Logger,
  type SearchIndex,
  type SupportedType,
} from "@docstore/shared";
import type { ReadyMarks } from "./ready-marks.ts";

export interface PipelineDeps {
  catalog: Catalog;
  blobs: BlobStore;
  index: SearchIndex;
  embedder?: Embedder | null;
  /** Runs extractors isolated and timed (a worker-thread sandbox). */
  extractor: { extract(bytes: Uint8Array, type: string): Promise<Extracted> };
  logger: Logger;
  /** Chunks extracted text, on threads of its own or not (createChunker). */
  chunker: Chunker;
  /**
   * Where documents written wait to be marked ready until the index has published them
   * (SearchIndex.publish: LanceDB's next maintenance run after a large load), while the next
   * batches go on. Without it, or with an index without publish, they are marked ready as soon
   * as they are written.
   */
  readyMarks?: ReadyMarks;
}

interface Prepared {
  record: DocumentRecord;
  doc: IndexedDocument;
  chunks: ChunkInput[];
}

/**
 * Ingests a batch: load each blob, extract, chunk, then index all of them in one write.
 * A job whose version is no longer current (re-loaded or deleted meanwhile), or is already
 * ready or failed, is skipped, and a version indexed while it was being deleted is removed
 * again, so deletes always win.
 */
export async function ingestBatch(jobs: ClaimedJob[], deps: PipelineDeps, attempt: Attempt = { finalAttempt: false }): Promise<void> {
  if (attempt.abandon !== undefined) {
    deps.logger.error({ jobs: jobs.map((j) => `${j.collection}/${j.docId}`), reason: attempt.abandon }, "giving up on ingestion jobs");
    return giveUp(jobs, attempt.abandon, deps);
  }
  try {
    await ingest(jobs, deps);
  } catch (err) {
    // DATA_DIR full or read-only is waited out, however long (the queue spends no attempt on
    // it): recording the documents failed would need the very storage that refused.
    if (!attempt.finalAttempt || err instanceof StorageError) throw err;
    // Out of retries (a dependency stayed down): settle the documents rather than leave them
    // in processing. A later load of the same doc_id starts afresh.
    deps.logger.error({ err, jobs: jobs.length }, "giving up on ingestion jobs");
    await giveUp(jobs, `ingestion failed after retries: ${(err as Error).message}`, deps);
  }
}

/**
 * Marks the documents failed with `reason`, and removes from the index what an earlier run
 * of the same version may have written before it died, so that a failed document is never
 * found by a search. A version already settled (an earlier run got as far as marking it ready)
 * is left as it is.
 */
async function giveUp(jobs: ClaimedJob[], reason: string, deps: PipelineDeps): Promise<void> {
  await Promise.all(
    jobs.map(async (j) => {
      const record = await deps.catalog.get(j.collection, j.docId);
      if (!pending(record, j)) return;
      if (!(await deps.catalog.markFailed(j.collection, j.docId, j.version, reason))) return;
      await deps.index.deleteDocument(j.collection, j.docId, j.version).catch((err: unknown) => {
        deps.logger.warn({ err, collection: j.collection, docId: j.docId }, "index rows of a failed document not removed");
      });
    }),
  );
}

async function ingest(jobs: ClaimedJob[], deps: PipelineDeps): Promise<void> {
  // I/O of the whole batch at once; the catalog and blob adapters batch or parallelise it.
  const loaded = await Promise.all(jobs.map((job) => load(job, deps)));
  const prepared: Prepared[] = [];
  const failures: Promise<boolean>[] = [];
  const refreshed = await Promise.all(loaded.map((item) => (item ? refresh(item.record, deps) : false)));
  const outcomes = await Promise.allSettled(
    loaded.map((item, i) => (item && !refreshed[i] ? prepare(item.record, item.bytes, deps) : null)),
  );
  for (const [i, outcome] of outcomes.entries()) {
    const item = loaded[i];
    if (!item) continue;
    const { record } = item;
    if (outcome.status === "fulfilled") {
      if (outcome.value) prepared.push(outcome.value);
      continue;
    }
    const err = outcome.reason as unknown;
    // A DocumentError can never succeed for this document; anything else is retried.
    if (!(err instanceof DocumentError)) throw err;
    deps.logger.warn({ collection: record.collection, docId: record.docId, reason: err.message }, "document failed");
    failures.push(deps.catalog.markFailed(record.collection, record.docId, record.version, err.message));
  }
  await Promise.all(failures);
  if (prepared.length === 0) return;
  let applied: boolean[];
  try {
    if (deps.embedder) await embed(prepared, deps.embedder);
    applied = await deps.index.indexDocuments(
      prepared.map(({ doc, chunks }) => ({ doc, chunks })),
      { deferred: publishing(deps) },
    );
  } catch (err) {
    // A wrong dimension or a request the service refuses fails the same way on every retry.
    if (!(err instanceof DocumentError || err instanceof EmbeddingRejectedError)) throw err;
    deps.logger.error({ err }, "embedding refused");
    await Promise.all(prepared.map(({ record: r }) => deps.catalog.markFailed(r.collection, r.docId, r.version, err.message)));
    return;
  }
  // What the marks need, and no more: a large load's documents may wait for them by the hundred thousand.
  const written = prepared.flatMap(({ record: { collection, docId, version }, chunks }, i) =>
    applied[i] ? [{ collection, docId, version, chunks: chunks.length }] : [],
  );
  await markWhenSearchable(written, deps);
}

interface Written {
  collection: string;
  docId: string;
  version: number;
  chunks: number;
}

/** Marks a version ready; one deleted or loaded again meanwhile is removed from the index again. */
async function markReady({ collection, docId, version, chunks }: Written, deps: PipelineDeps): Promise<void> {
  const stillCurrent = await deps.catalog.markReady(collection, docId, version, chunks);
  if (!stillCurrent) await deps.index.deleteDocument(collection, docId, version);
}

/** Whether the documents are written deferred, then published before they are marked ready. */
const publishing = (deps: PipelineDeps) => deps.readyMarks !== undefined && deps.index.publish !== undefined;

/** Marks the versions ready at once, or, when publishing, once the index has published them (after this batch). */
async function markWhenSearchable(written: Written[], deps: PipelineDeps): Promise<void> {
  const mark = () => Promise.all(written.map((w) => markReady(w, deps)));
  if (!publishing(deps)) return void (await mark());
  const docs = written.map(({ collection, docId, chunks }) => ({ collection, docId, chunks }));
  deps.readyMarks!.after((now) => deps.index.publish!(docs, now), mark);
}

/**
 * The same bytes loaded again under the same doc_id: the indexed version takes the new version
 * number and metadata, with no extraction and no embedding. True when that happened.
 */
async function refresh(record: DocumentRecord, deps: PipelineDeps): Promise<boolean> {
  if (record.version === 1) return false;
  const { collection, docId, version, metadata, sha256 } = record;
  const chunks = await deps.index.refreshDocument({ collection, docId, version, metadata, sha256 }, { deferred: publishing(deps) });
  if (chunks === null) return false;
  await markWhenSearchable([{ collection, docId, version, chunks }], deps);
  return true;
}

/**
 * The current record and raw bytes of a job, or null when the job is superseded or its version
 * already settled: a job queued again after its version was indexed (the recovery of lost jobs
 * behind a job that was only slow) does nothing. Two runs that overlap both write the version,
 * and the index keeps one copy of each chunk (deterministic chunk ids).
 *
 * A job the catalog's own queue claimed carries its record as the claim left it, so the catalog
 * is not read again. If the document is loaded again or deleted after that claim, its blob may
 * be gone: the catalog is read then, and a superseded job is skipped. Otherwise the version is
 * indexed all the same, then removed again when marking it ready finds it no longer current.
 */
async function load(job: ClaimedJob, deps: PipelineDeps): Promise<{ record: DocumentRecord; bytes: Uint8Array | null } | null> {
  const record = job.record ?? (await deps.catalog.get(job.collection, job.docId));
  if (!pending(record, job)) return null;
  // Queues that do not claim through the catalog (BullMQ) show progress here.
  if (record.status === "queued") await deps.catalog.markProcessing(job.collection, job.docId, job.version);
  try {
    return { record, bytes: await deps.blobs.get(record.blobKey) };
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    if (job.record && !pending(await deps.catalog.get(job.collection, job.docId), job)) return null;
    return { record, bytes: null };
  }
}

/** Whether `record` is the job's version, still to be indexed. */
function pending(record: DocumentRecord | null, job: ClaimedJob): record is DocumentRecord {
  return record !== null && record.version === job.version && record.status !== "ready" && record.status !== "failed";
}

/** Plain text and Markdown are only decoded: no parser to hang or crash, so no sandbox trip. */
const DECODE_ONLY = new Set(["text/plain", "text/markdown"]);

async function prepare(record: DocumentRecord, bytes: Uint8Array | null, deps: PipelineDeps): Promise<Prepared> {
  if (bytes === null) throw new DocumentError("raw content missing from the blob store");
  // Extractors throw ExtractionError (a DocumentError) for a document at fault.
  const extracted = DECODE_ONLY.has(record.contentType)
    ? joinSections([{ text: extractText(bytes, record.contentType as SupportedType), at: {} }])
    : await deps.extractor.extract(bytes, record.contentType);
  return chunked(record, extracted, deps);
}

/** Chunks an extracted document; each chunk cites its page, sheet or slide, and headings. */
async function chunked(record: DocumentRecord, extracted: Extracted, deps: PipelineDeps): Promise<Prepared> {
  const { text, sections } = extracted;
  const chunks = await deps.chunker.chunk(text, sections);
  if (chunks.length === 0) throw new DocumentError("no extractable text");
  return {
    record,
    doc: {
      collection: record.collection,
      docId: record.docId,
      version: record.version,
      metadata: record.metadata,
      text,
      sha256: record.sha256,
    },
    chunks: chunks.map(({ index, start, end, citation }) => ({ index, text: text.slice(start, end), start, end, citation })),
  };
}

/** One embeddings call for the whole batch (the embedder splits it within the API's limits). */
async function embed(prepared: Prepared[], embedder: Embedder): Promise<void> {
  const chunks = prepared.flatMap((p) => p.chunks);
  const vectors = await embedder.embed(chunks.map((c) => c.text));
  chunks.forEach((c, i) => (c.vector = vectors[i]));
}
