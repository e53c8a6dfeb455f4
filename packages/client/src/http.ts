import { ConnectionError, ProblemError, problemOf } from "./problem.ts";
import { DEFAULT_RETRY, RETRYABLE, parseRetryAfter, retryDelay, type RetryPolicy } from "./retry.ts";

export type QueryValue = string | number | boolean | readonly string[] | undefined;

export interface RetryInfo {
  method: string;
  path: string;
  /** The try that failed, from 1. */
  attempt: number;
  /** How long the client waits before the next try. */
  delayMs: number;
  /** The answer's status, or undefined when the connection was refused. */
  status: number | undefined;
  /** Whether the wait is the service's Retry-After rather than the client's backoff. */
  retryAfter: boolean;
}

export interface TransportOptions {
  /** The service's base URL, e.g. http://127.0.0.1:8080. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  retry?: Partial<RetryPolicy>;
  /** Told before each wait for a retry (for progress displays and logs). */
  onRetry?: (info: RetryInfo) => void;
  /** Headers sent with every request (e.g. a request id). */
  headers?: Record<string, string>;
}

export interface Call {
  query?: Record<string, QueryValue>;
  json?: unknown;
  form?: FormData;
  /** Answers with these statuses are returned as they are instead of raised (e.g. a readiness probe's 503). */
  accept?: readonly number[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A connection that was never made: safe to try again whatever the method. */
function refused(err: unknown): boolean {
  const code = (err as { cause?: { code?: string } })?.cause?.code;
  return code === "ECONNREFUSED";
}

/** One HTTP exchange with the service: bearer token, JSON or multipart bodies, problem details raised, 429/503 retried. */
export class Transport {
  readonly base: URL;
  readonly #token: string | undefined;
  readonly #retry: RetryPolicy;
  readonly #onRetry: TransportOptions["onRetry"];
  readonly #headers: Record<string, string>;

  constructor(opts: TransportOptions) {
    this.base = new URL(opts.url.endsWith("/") ? opts.url : `${opts.url}/`);
    this.#token = opts.token;
    this.#retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.#onRetry = opts.onRetry;
    this.#headers = opts.headers ?? {};
  }

  url(path: string, query: Record<string, QueryValue> = {}): URL {
    const url = new URL(path.replace(/^\//, ""), this.base);
    for (const [key, value] of Object.entries(query)) {
      if (value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(key, String(item));
    }
    return url;
  }

  async request<T>(method: string, path: string, call: Call = {}): Promise<T> {
    const url = this.url(path, call.query);
    const headers: Record<string, string> = { accept: "application/json", ...this.#headers };
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    let body: string | FormData | undefined;
    if (call.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(call.json);
    } else if (call.form) body = call.form;

    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(url, { method, headers, body });
      } catch (err) {
        const delay = refused(err) ? retryDelay(this.#retry, attempt, undefined) : null;
        if (delay === null) throw new ConnectionError(url.origin, err);
        this.#onRetry?.({ method, path, attempt, delayMs: delay, status: undefined, retryAfter: false });
        await sleep(delay);
        continue;
      }
      const text = await res.text();
      if (res.ok || call.accept?.includes(res.status)) return (text === "" ? undefined : JSON.parse(text)) as T;
      const retryAfter = parseRetryAfter(res.headers.get("retry-after"));
      const error = new ProblemError(problemOf(res.status, res.statusText, path, text), retryAfter);
      const delay = RETRYABLE.has(res.status) ? retryDelay(this.#retry, attempt, retryAfter) : null;
      if (delay === null) throw error;
      this.#onRetry?.({ method, path, attempt, delayMs: delay, status: res.status, retryAfter: retryAfter !== undefined });
      await sleep(delay);
    }
  }
}
