/**
 * The ports: small interfaces that the API and the ingestion pipeline depend on. Each adapter
 * lives in the folder of its port and is chosen by createServices (compose.ts) from the
 * configuration. Every port that holds a resource (a connection, a file, a timer) has close().
 */
import type { Filter } from "./filter/ast.ts";
import type { Metadata } from "./domain/metadata.ts";
import type { Citation } from "./domain/citation.ts";
import type { IngestJob, JobHandlers } from "./domain/jobs.ts";

export type { Citation } from "./domain/citation.ts";
export type { IngestJob } from "./domain/jobs.ts";

/** Raw files and texts, addressed by keys that our code builds from validated names. */
export interface BlobStore {
  put(key: string, data: Uint8Array): Promise<void>;
  get(key: string): Promise<Uint8Array>;
  delete(key: string): Promise<void>;
  /** Removes every blob whose key starts with `prefix` (a whole collection). */
  deletePrefix(prefix: string): Promise<void>;
  list(prefix: string): AsyncIterable<string>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export type DocumentStatus = "queued" | "processing" | "ready" | "failed";

/**
 * An ingestion job as a queue hands it out. `record`, outside the payload: the document's record
 * as the queue's claim left it, when the queue is the catalog itself (the embedded mode's), so
 * the worker need not read it again; a queue of payloads (BullMQ) has none.
 */
export type ClaimedJob = IngestJob & { record?: DocumentRecord };

/** One document as the catalog knows it: its latest accepted version and where it stands. */
export interface DocumentRecord {
  collection: string;
  docId: string;
  version: number;
  jobId: string;
  status: DocumentStatus;
  metadata: Metadata;
  filename: string | null;
  contentType: string;
  blobKey: string;
  size: number;
  sha256: string;
  chunks: number;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

export type NewDocument = Pick<
  DocumentRecord,
  "collection" | "docId" | "jobId" | "metadata" | "filename" | "contentType" | "blobKey" | "size" | "sha256"
>;

export interface Page<T> {
  items: T[];
  /** Opaque position after the last item, or null at the end. */
  next: string | null;
}

/** A collection with its documents counted by ingestion status (pending = queued or processing). */
export interface CollectionStats {
  name: string;
  documents: number;
  ready: number;
  pending: number;
  failed: number;
}

/** The registry of collections and documents with their ingestion status. */
export interface Catalog {
  /** Records a new version of a document as queued; returns it and the version it replaced. */
  accept(doc: NewDocument): Promise<{ record: DocumentRecord; previous: DocumentRecord | null }>;
  /** Undoes an accept whose job could not be queued: the previous version comes back, or none. */
  rollback(record: DocumentRecord, previous: DocumentRecord | null): Promise<void>;
  get(collection: string, docId: string): Promise<DocumentRecord | null>;
  /** Each mark applies only while `version` is still the document's current version. */
  markProcessing(collection: string, docId: string, version: number): Promise<boolean>;
  markReady(collection: string, docId: string, version: number, chunks: number): Promise<boolean>;
  markFailed(collection: string, docId: string, version: number, error: string): Promise<boolean>;
  /** Puts the version back to `queued` (to be indexed again), its chunks and error cleared. */
  markQueued(collection: string, docId: string, version: number): Promise<boolean>;
  delete(collection: string, docId: string): Promise<DocumentRecord | null>;
  deleteCollection(collection: string): Promise<number>;
  collectionExists(collection: string): Promise<boolean>;
  listCollections(): Promise<CollectionStats[]>;
  /**
   * Every metadata key that a document of these collections has been loaded with since the
   * collection was made: a superset of the keys present now (deletes and replacements remove
   * none), so a key missing from it is on no document. One cheap read, for filter warnings.
   */
  metadataFields(collections: readonly string[]): Promise<Set<string>>;
  /** A page in doc_id order; `next` is documentCursor(id of the last item) when more follow. */
  listDocuments(collection: string, limit: number, cursor: string | null): Promise<Page<DocumentRecord>>;
  /**
   * Documents of every collection that are `queued` or `processing` and last changed before
   * `before` (an ISO instant), oldest change first, a page at a time: where lost jobs are looked
   * for. Indexed: a page costs about the same whatever the size of the catalog.
   */
  listPending(before: string, limit: number, cursor: string | null): Promise<Page<DocumentRecord>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface JobQueue {
  /** Queues the jobs in one call; when it throws, none may have been queued, or some (a job whose version is not current is skipped). */
  enqueue(jobs: IngestJob[]): Promise<void>;
  /** Starts consuming: each handler gets its queue's jobs in batches and must settle every job in them. */
  start(handlers: JobHandlers): void;
  /** Jobs were added by another thread or process: look for them now (a no-op where the queue pushes them). */
  wake(): void;
  /**
   * Whether a job with this id waits, is delayed or runs: false once it finished, or when the
   * queue lost it (Redis restarted empty). Where the catalog is the queue, always true.
   */
  isPending(jobId: string): Promise<boolean>;
  /**
   * Queues a job again whose run finished or was lost. A no-op, answering false, while a job
   * with its id is pending: two callers racing leave one job.
   */
  resubmit(job: IngestJob): Promise<boolean>;
  /** Stops taking jobs and waits for the batch in flight. */
  stop(): Promise<void>;
  ping(): Promise<void>;
  /** Stops, then releases the queue's connections. */
  close(): Promise<void>;
}

export interface ChunkInput {
  index: number;
  text: string;
  start: number;
  end: number;
  vector?: number[];
  /** Page, sheet or slide, and the heading path, for citations. */
  citation?: Citation;
}

export interface IndexedDocument {
  collection: string;
  docId: string;
  version: number;
  metadata: Metadata;
  text: string;
  /** Of the raw bytes: a re-load of the same bytes only refreshes the metadata. */
  sha256?: string;
}

export interface SearchRequest {
  query: string;
  vector?: number[];
  collections: string[];
  filter: Filter;
  k: number;
}

export interface SearchHit {
  collection: string;
  docId: string;
  chunkIndex: number;
  text: string;
  start: number;
  end: number;
  score: number;
  metadata: Metadata;
  citation?: Citation;
}

/** One chunk of a document as the index holds it, with its citation. */
export interface StoredChunk {
  chunkIndex: number;
  text: string;
  start: number;
  end: number;
  citation?: Citation;
}

/** The chunks of the version of a document that the index holds, in chunk order. */
export interface DocumentChunks {
  version: number;
  chunks: StoredChunk[];
}

export interface FindRequest {
  collections: string[];
  filter: Filter;
  limit: number;
  offset: number;
}

export interface ScanRequest {
  collections: string[];
  filter: Filter;
  /** Documents per batch handed out. */
  batch: number;
}

/** What the index holds of one document, for consistency checks. */
export interface IndexEntry {
  collection: string;
  docId: string;
  /** The newest version the index shows. */
  version: number;
  /**
   * Its chunks in the index, of every version: the version's chunk count exactly when the index
   * holds that version whole and nothing else of the document.
   */
  chunks: number;
}

/** Which documents an inventory covers: a collection's (or every one's), or only some of them. */
export interface InventoryScope {
  /** Null: every collection the index holds, those the catalog no longer knows included. */
  collection: string | null;
  /** Only these documents of `collection` (then each appears at most once). */
  docIds?: readonly string[];
}

/** How a write to the search index becomes visible to searches. */
export interface WriteOptions {
  /**
   * The caller publishes the documents later (SearchIndex.publish), and searches need not find
   * them before (they are not ready yet). Ignored by an index without publish. Default: they are
   * found as soon as the write returns.
   */
  deferred?: boolean;
}

/** A document written `deferred`, with the chunks its version has. */
export interface PublishedDocument {
  collection: string;
  docId: string;
  chunks: number;
}

/** The searchable side: chunks with their document's metadata. */
export interface SearchIndex {
  /**
   * Makes each document's version visible whole (never a part of its chunks) and removes older
   * versions: in the same step where the engine allows it (SQLite), right after it otherwise
   * (Qdrant: see index/qdrant/write.ts). Returns, per item, false when a newer version was
   * already indexed (the item is ignored).
   */
  indexDocuments(items: { doc: IndexedDocument; chunks: ChunkInput[] }[], options?: WriteOptions): Promise<boolean[]>;
  /**
   * When the version indexed has the same raw bytes (sha256), moves it to `version` with the new
   * metadata, without touching its chunks, and returns its chunk count; otherwise null.
   */
  refreshDocument(doc: Omit<IndexedDocument, "text"> & { sha256: string }, options?: WriteOptions): Promise<number | null>;
  /**
   * For documents written `deferred`: resolves once searches find them, at their own speed where
   * the index can wait for that (LanceDB: once a maintenance run folded them into the full-text
   * index, or at once while few rows are outside it; see LanceSearchIndex.publish). `now` makes
   * it resolve at once, the documents found all the same. The worker marks documents ready then.
   * Absent where what is written is found as it is written (Qdrant).
   */
  publish?(docs: readonly PublishedDocument[], now?: AbortSignal): Promise<void>;
  /** Removes a document; with `version`, only if that is the version indexed. */
  deleteDocument(collection: string, docId: string, version?: number): Promise<void>;
  deleteCollection(collection: string): Promise<void>;
  search(request: SearchRequest): Promise<SearchHit[]>;
  /** Documents matching a filter, in the filter's ORDERBY order (then by collection and id). */
  findDocuments(request: FindRequest): Promise<IndexedDocument[]>;
  /**
   * Every document findDocuments would return, in the same order, `batch` at a time, for an
   * answer streamed whole: the texts of the next batch are read only when it is asked for.
   * A batch may be empty or short (a document deleted meanwhile is left out).
   */
  scanDocuments(request: ScanRequest): AsyncIterable<IndexedDocument[]>;
  /** The chunks of the document's version indexed (of the newest, while two are), or null when none is. */
  documentChunks(collection: string, docId: string): Promise<DocumentChunks | null>;
  /**
   * One entry per document the scope holds, `batch` at a time, in no set order: ids, versions
   * and counts only, never texts or vectors, with memory bounded by the batch. Without
   * `docIds`, a document whose versions are being replaced meanwhile may appear twice.
   */
  inventory(scope: InventoryScope, batch: number): AsyncIterable<IndexEntry[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Dense vectors for texts. One adapter per provider; `dimensions` must match the index. */
export interface Embedder {
  readonly model: string;
  readonly dimensions: number;
  /** One vector per text, in order. Batching, retries and caching are the adapter's. */
  embed(texts: string[]): Promise<number[][]>;
  close(): Promise<void>;
}
