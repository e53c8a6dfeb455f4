import http from "node:http";
import https from "node:https";
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

/** A multipart/form-data body, already encoded. */
export interface Form {
  contentType: string;
  body: Buffer;
}

export interface Call {
  query?: Record<string, QueryValue>;
  json?: unknown;
  form?: Form;
  /** Answers with these statuses are returned as they are instead of raised (e.g. a readiness probe's 503). */
  accept?: readonly number[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A connection that was never made: safe to try again whatever the method. */
function refused(err: unknown): boolean {
  return (err as NodeJS.ErrnoException)?.code === "ECONNREFUSED";
}

interface Answer {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * One HTTP exchange with the service: bearer token, JSON or multipart bodies, problem details
 * raised, 429/503 retried. It speaks through node:http with connections kept alive (idle ones
 * do not keep the process running), which costs a client far less per request than fetch.
 */
export class Transport {
  readonly base: URL;
  readonly #token: string | undefined;
  readonly #retry: RetryPolicy;
  readonly #onRetry: TransportOptions["onRetry"];
  readonly #headers: Record<string, string>;
  readonly #agent: http.Agent;

  constructor(opts: TransportOptions) {
    this.base = new URL(opts.url.endsWith("/") ? opts.url : `${opts.url}/`);
    this.#token = opts.token;
    this.#retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.#onRetry = opts.onRetry;
    this.#headers = opts.headers ?? {};
    this.#agent = this.base.protocol === "https:" ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  }

  url(path: string, query: Record<string, QueryValue> = {}): URL {
    const url = new URL(path.replace(/^\//, ""), this.base);
    for (const [key, value] of Object.entries(query)) {
      if (value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(key, String(item));
    }
    return url;
  }

  /** Closes the connections kept for later requests. */
  close(): void {
    this.#agent.destroy();
  }

  #exchange(method: string, url: URL, headers: Record<string, string>, body: string | Buffer | undefined): Promise<Answer> {
    const send = url.protocol === "https:" ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = send(url, { method, headers, agent: this.#agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            statusText: res.statusMessage ?? "",
            headers: res.headers,
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  async request<T>(method: string, path: string, call: Call = {}): Promise<T> {
    const url = this.url(path, call.query);
    const headers: Record<string, string> = { accept: "application/json", ...this.#headers };
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    let body: string | Buffer | undefined;
    if (call.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(call.json);
    } else if (call.form) {
      headers["content-type"] = call.form.contentType;
      body = call.form.body;
    }
    if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));

    for (let attempt = 1; ; attempt++) {
      let res: Answer;
      try {
        res = await this.#exchange(method, url, headers, body);
      } catch (err) {
        const delay = refused(err) ? retryDelay(this.#retry, attempt, undefined) : null;
        if (delay === null) throw new ConnectionError(url.origin, err);
        this.#onRetry?.({ method, path, attempt, delayMs: delay, status: undefined, retryAfter: false });
        await sleep(delay);
        continue;
      }
      const ok = res.status >= 200 && res.status < 300;
      if (ok || call.accept?.includes(res.status)) return (res.text === "" ? undefined : JSON.parse(res.text)) as T;
      const header = res.headers["retry-after"];
      const retryAfter = parseRetryAfter(typeof header === "string" ? header : null);
      const error = new ProblemError(problemOf(res.status, res.statusText, path, res.text), retryAfter);
      const delay = RETRYABLE.has(res.status) ? retryDelay(this.#retry, attempt, retryAfter) : null;
      if (delay === null) throw error;
      this.#onRetry?.({ method, path, attempt, delayMs: delay, status: res.status, retryAfter: retryAfter !== undefined });
      await sleep(delay);
    }
  }
}
