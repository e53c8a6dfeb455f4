export { DocstoreClient, OPERATIONS } from "./client.ts";
export type {
  BulkDocument,
  Chunk,
  ChunkPage,
  DocumentListOptions,
  DocumentState,
  CollectionSummary,
  ContentPage,
  DocumentPage,
  DocumentStatus,
  DoctorReport,
  FileInput,
  ListedDocument,
  LoadOptions,
  LoadResult,
  Metadata,
  PageOptions,
  Readiness,
  SearchOptions,
  SearchResponse,
  SearchResult,
  TaggedDocument,
} from "./client.ts";
export type { RetryInfo, TransportOptions } from "./http.ts";
export { ProblemError, ConnectionError, type Problem } from "./problem.ts";
export { DEFAULT_RETRY, parseRetryAfter, retryDelay, type RetryPolicy } from "./retry.ts";
export type { OperationKey } from "./operations.ts";
