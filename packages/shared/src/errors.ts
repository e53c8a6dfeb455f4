/**
 * Every error docstore raises on purpose, in one tree. Errors say what went wrong (`kind`),
 * never how to answer it: the HTTP layer alone maps a kind to a status (api/src/problem.ts).
 *
 *   Error
 *   ├── ConfigError                   the environment cannot make a working configuration
 *   ├── AppError (kind)               a request cannot be served as asked
 *   │   ├── BadRequestError           invalid
 *   │   │   └── FilterSyntaxError     invalid, with the position of the problem
 *   │   ├── UnauthorizedError         unauthenticated
 *   │   ├── ForbiddenError            forbidden
 *   │   ├── RateLimitedError          rate_limited: over the token's requests per minute
 *   │   ├── NotFoundError             not_found
 *   │   ├── UnsupportedMediaTypeError unsupported
 *   │   ├── MethodNotAllowedError     method_not_allowed: the path is served, not with this method
 *   │   ├── HeaderFieldsTooLargeError headers_too_large: more header fields than are read
 *   │   ├── TooLargeError             too_large: over a configured size limit
 *   │   ├── UnavailableError          unavailable: a dependency is down; retrying later can work
 *   │   ├── StorageError              insufficient_storage or unavailable: DATA_DIR cannot take a write
 *   │   └── EmbeddingRejectedError     upstream: a dependency refused a request it will always refuse
 *   └── DocumentError                 one document can never be indexed as it is: it ends `failed`
 *       ├── ExtractionError           its text cannot be extracted (encrypted, corrupt, a bomb...)
 *       └── DimensionMismatchError    the embedder's vectors do not fit the index
 */

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export type ErrorKind =
  | "invalid"
  | "unauthenticated"
  | "forbidden"
  | "rate_limited"
  | "not_found"
  | "unsupported"
  | "method_not_allowed"
  | "headers_too_large"
  | "too_large"
  | "unavailable"
  | "insufficient_storage"
  | "upstream";

export class AppError extends Error {
  readonly kind: ErrorKind;
  /** Extra members for the problem-details body (e.g. a filter error's position). */
  readonly extras: Record<string, unknown>;

  constructor(kind: ErrorKind, detail: string, options?: { cause?: unknown; extras?: Record<string, unknown> }) {
    super(detail, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.kind = kind;
    this.extras = options?.extras ?? {};
  }
}

export class BadRequestError extends AppError {
  constructor(detail: string, extras?: Record<string, unknown>) {
    super("invalid", detail, { extras });
  }
}

/** A filter string that does not parse; `position` is the 0-based offset of the problem. */
export class FilterSyntaxError extends BadRequestError {
  readonly position: number;

  constructor(message: string, position: number) {
    super(`${message} at position ${position}`, { position });
    this.position = position;
  }
}

export class UnauthorizedError extends AppError {
  constructor(detail: string) {
    super("unauthenticated", detail);
  }
}

export class ForbiddenError extends AppError {
  constructor(detail: string) {
    super("forbidden", detail);
  }
}

/** A token over its budget of requests; `retryAfterSeconds` is when the next one is allowed. */
export class RateLimitedError extends AppError {
  readonly retryAfterSeconds: number;

  constructor(detail: string, retryAfterSeconds: number) {
    super("rate_limited", detail, { extras: { retry_after: retryAfterSeconds } });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class NotFoundError extends AppError {
  constructor(detail: string) {
    super("not_found", detail);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(detail: string, mediaType?: string) {
    super("unsupported", detail, { extras: mediaType ? { media_type: mediaType } : {} });
  }
}

/** A method the path does not serve (the answer's `Allow` header lists those it does). */
export class MethodNotAllowedError extends AppError {
  constructor(detail: string) {
    super("method_not_allowed", detail);
  }
}

/** A request with more header fields than the service reads (api/src/well-formed.ts). */
export class HeaderFieldsTooLargeError extends AppError {
  constructor(detail: string) {
    super("headers_too_large", detail);
  }
}

/** A request or upload over a size limit; the detail names the limit and the setting behind it. */
export class TooLargeError extends AppError {
  constructor(detail: string) {
    super("too_large", detail);
  }
}

export class UnavailableError extends AppError {
  constructor(detail: string, cause?: unknown) {
    super("unavailable", detail, { cause });
  }
}

/**
 * A write under DATA_DIR refused by the filesystem: no space left or over quota
 * (`insufficient_storage`), or files read-only or not ours to write (`unavailable`). Nothing was
 * written; the same write can succeed once space returns or the files are writable again, so
 * the workers retry it for as long as it takes, without counting it against a job's attempts
 * (storage-errors.ts makes these from what each store's library throws).
 */
export class StorageError extends AppError {
  readonly reason: "full" | "read-only";

  constructor(reason: "full" | "read-only", detail: string, cause: unknown) {
    super(reason === "full" ? "insufficient_storage" : "unavailable", detail, { cause });
    this.reason = reason;
  }
}

/** The embedding service refused a request for a reason a retry cannot fix (bad key, unknown model, input too long). */
export class EmbeddingRejectedError extends AppError {
  readonly upstreamStatus: number | undefined;

  constructor(detail: string, upstreamStatus: number | undefined, cause: unknown) {
    super("upstream", detail, { cause });
    this.upstreamStatus = upstreamStatus;
  }
}

/** A document that can never be indexed as it is: the worker marks it `failed` with this message, and never retries it. */
export class DocumentError extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = new.target.name;
  }
}

/**
 * A document whose text cannot be extracted: it ends `failed` with `reason` (e.g.
 * "no extractable text", "encrypted PDF", "corrupt or truncated PDF", "decompression bomb:
 * ...", "extraction timed out").
 */
export class ExtractionError extends DocumentError {}

/** The model gives vectors of another length than the index holds: a configuration error that fails the documents. */
export class DimensionMismatchError extends DocumentError {
  readonly expected: number;
  readonly actual: number;

  constructor(message: string, expected: number, actual: number) {
    super(message);
    this.expected = expected;
    this.actual = actual;
  }

  /** The embedder answered with vectors of the wrong length. */
  static fromModel(model: string, expected: number, actual: number): DimensionMismatchError {
    return new DimensionMismatchError(
      `embedding model "${model}" returned ${actual}-dimensional vectors but EMBEDDING_DIMENSIONS (the index) expects ${expected}; ` +
        `set EMBEDDING_DIMENSIONS=${actual} and re-index, or choose a model that gives ${expected}`,
      expected,
      actual,
    );
  }

  /** The index was built with vectors of another length than the embedder gives now. */
  static fromIndex(stored: number, given: number): DimensionMismatchError {
    return new DimensionMismatchError(
      `the index holds ${stored}-dimensional vectors but the embedder gives ${given}: ` +
        `set EMBEDDING_DIMENSIONS=${stored} again, or index into a fresh DATA_DIR`,
      stored,
      given,
    );
  }
}
