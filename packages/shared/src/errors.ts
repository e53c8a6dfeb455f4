/**
 * One typed error base carrying the HTTP status; the API's error middleware turns any
 * AppError into RFC 9457 problem details, and anything else into a 500.
 */
export class AppError extends Error {
  readonly status: number;
  readonly title: string;
  /** Extra members for the problem-details body (e.g. a filter error's position). */
  readonly extras: Record<string, unknown>;

  constructor(status: number, title: string, detail: string, options?: { cause?: unknown; extras?: Record<string, unknown> }) {
    super(detail, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.title = title;
    this.extras = options?.extras ?? {};
  }
}

export class BadRequestError extends AppError {
  constructor(detail: string, extras?: Record<string, unknown>) {
    super(400, "Bad Request", detail, { extras });
  }
}

export class UnauthorizedError extends AppError {
  constructor(detail: string) {
    super(401, "Unauthorized", detail);
  }
}

export class ForbiddenError extends AppError {
  constructor(detail: string) {
    super(403, "Forbidden", detail);
  }
}

export class NotFoundError extends AppError {
  constructor(detail: string) {
    super(404, "Not Found", detail);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(detail: string) {
    super(413, "Content Too Large", detail);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(detail: string, mediaType?: string) {
    super(415, "Unsupported Media Type", detail, { extras: mediaType ? { media_type: mediaType } : {} });
  }
}

export class UnavailableError extends AppError {
  constructor(detail: string, cause?: unknown) {
    super(503, "Service Unavailable", detail, { cause });
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
