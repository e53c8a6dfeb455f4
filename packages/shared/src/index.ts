/**
 * What packages/api and packages/worker import from shared, by name, and nothing else. Tests
 * import the modules they test directly; test support is `@docstore/shared/testing`.
 */
// First: sizes LanceDB's threads before any module below loads LanceDB.
import "./index/lancedb-env.ts";
export {
  loadConfig,
  ALL_SCOPES,
  COLLECTION_PATTERN,
  type ApiToken,
  type Config,
  type Env,
  type JwtConfig,
  type RateLimitConfig,
  type Scope,
} from "./config.ts";
export { configOrExit, listen, onShutdown, orExit } from "./lifecycle.ts";
export { checkDataDir, claimDataDir, LOCK_FILE, type DataDirClaim } from "./data-dir.ts";
export { createLogger, type Logger } from "./logger.ts";
export { createServices, type ApiServices, type WorkerServices } from "./compose.ts";
export {
  AppError,
  BadRequestError,
  ConfigError,
  DocumentError,
  EmbeddingRejectedError,
  FilterSyntaxError,
  ForbiddenError,
  HeaderFieldsTooLargeError,
  MethodNotAllowedError,
  NotFoundError,
  RateLimitedError,
  StorageError,
  TooLargeError,
  UnsupportedMediaTypeError,
  UnauthorizedError,
  UnavailableError,
  type ErrorKind,
} from "./errors.ts";
export type {
  BlobStore,
  Catalog,
  Citation,
  ClaimedJob,
  ChunkInput,
  DocumentChunks,
  DocumentRecord,
  Embedder,
  IndexedDocument,
  PublishedDocument,
  SearchIndex,
  StoredChunk,
} from "./ports.ts";
export type { Attempt, DroppedJob, IngestJob, JobHandlers, QueueName } from "./domain/jobs.ts";
export { isCatalogCalls, serveCatalogWrites, type LocalCatalog } from "./catalog/rpc.ts";
export { isSqliteBusy } from "./sqlite/busy.ts";
export {
  runDoctor,
  DISAGREEMENTS,
  UNREPAIRABLE,
  type Disagreement,
  type DoctorExample,
  type DoctorOptions,
  type DoctorReport,
  type Unrepairable,
} from "./doctor/doctor.ts";
export { startLostJobRecovery, type LostJobRecovery } from "./doctor/lost-jobs.ts";
export { metadataJsonSchema, parseMetadata, parseMetadataJson, type Metadata } from "./domain/metadata.ts";
export { COLLECTION_NAME, COLLECTION_NAME_RULE, DOC_ID, DOC_ID_RULE, blobKeyFor } from "./domain/names.ts";
export { decodeCursor, documentCursor, encodeCursor } from "./domain/cursor.ts";
export { MAX_JSON_DEPTH, jsonDepth, tooDeep } from "./domain/json.ts";
export { jsonBytes } from "./json-bytes.ts";
export { SUPPORTED_TYPES, type SupportedType } from "./domain/media-types.ts";
export { parseFilter } from "./filter/parse.ts";
export { evaluate as matchesFilter } from "./filter/evaluate.ts";
export type { Filter } from "./filter/ast.ts";
export { detectType } from "./detect/detect.ts";
export { extractText } from "./extract/text.ts";
export { joinSections, type Extracted } from "./extract/types.ts";
export { createExtractionSandbox, DISPATCH_MODULE, type ExtractionSandbox } from "./extract/sandbox.ts";
export { chunkText } from "./chunk/chunk.ts";
export { chunkDocument, type DocumentChunk } from "./chunk/document.ts";
export { createChunker, type Chunker } from "./chunk/chunker.ts";
export { citeChunks } from "./chunk/citations.ts";
export { filterTypos } from "./filter/typos.ts";
export { onlyStopwords } from "./search/query-terms.ts";
export { closestName } from "./domain/suggest.ts";
export { uuidv7 } from "./domain/uuid.ts";
