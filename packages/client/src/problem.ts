/** RFC 9457 problem details, as the service sends them with every 4xx and 5xx. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  request_id?: string;
  /** Other members, e.g. `position` (a filter error's offset) or `media_type` (a refused upload). */
  [member: string]: unknown;
}

/** An answer that was not a success: the problem the service described, typed. */
export class ProblemError extends Error {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly type: string;
  readonly instance: string | undefined;
  readonly requestId: string | undefined;
  /** Seconds the service asked to wait (`Retry-After`), when it said. */
  readonly retryAfter: number | undefined;
  /** Every member of the body, the ones above included. */
  readonly problem: Problem;

  constructor(problem: Problem, retryAfter?: number) {
    super(`${problem.status} ${problem.title}: ${problem.detail}`);
    this.name = "ProblemError";
    this.problem = problem;
    this.status = problem.status;
    this.title = problem.title;
    this.detail = problem.detail;
    this.type = problem.type;
    this.instance = problem.instance;
    this.requestId = problem.request_id;
    this.retryAfter = retryAfter;
  }

  /** A filter error's 0-based offset, when the problem is one. */
  get position(): number | undefined {
    return typeof this.problem.position === "number" ? this.problem.position : undefined;
  }
}

/** The service could not be reached, or the connection broke before an answer came. */
export class ConnectionError extends Error {
  constructor(url: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException)?.code;
    super(`cannot reach ${url}: ${code ?? (cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = "ConnectionError";
  }
}

/** The problem an answer carries, or one made from its status when the body is not one. */
export function problemOf(status: number, statusText: string, path: string, text: string): Problem {
  try {
    const body = JSON.parse(text) as Partial<Problem>;
    if (body && typeof body === "object" && typeof body.status === "number" && typeof body.title === "string") {
      return { type: "about:blank", detail: "", ...body } as Problem;
    }
  } catch {
    // not JSON: described below
  }
  return {
    type: "about:blank",
    title: statusText || `HTTP ${status}`,
    status,
    detail: text.trim().slice(0, 500) || `HTTP ${status}`,
    instance: path,
  };
}
