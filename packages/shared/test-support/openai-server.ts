/**
 * A local server speaking OpenAI's embeddings protocol (POST /v1/embeddings, or /embeddings),
 * standing in for the SaaS in tests. Vectors are deterministic: a hashed bag of words projected
 * to the requested dimensions and normalised, so texts sharing words get similar vectors and
 * dense search ranks in a way a test can predict. It enforces OpenAI's request limits (inputs
 * per request, tokens per request and per input), so a batching bug shows as a 400, and can be
 * told to fail the next requests (429 with Retry-After, 5xx, a dropped connection, no answer at
 * all, vectors of the wrong length).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { countTokens } from "../src/chunk/tokenizer.ts";

export type Failure = number | "reset" | "stall" | "wrong-dimensions";

export interface OpenAIServerOptions {
  /** Vector length when a request does not ask for one (default 1536, as text-embedding-3-small). */
  dimensions?: number;
  /** When set, requests must carry `Authorization: Bearer <apiKey>`, else 401. */
  apiKey?: string;
  /** Delay before each answer, to observe concurrency. */
  delayMs?: number;
  maxInputs?: number;
  maxTokensPerRequest?: number;
  maxTokensPerInput?: number;
}

export interface OpenAIServer {
  /** Ends in /v1, as OPENAI_BASE_URL does. */
  readonly baseUrl: string;
  /** The service's variables that send its embeddings here (EMBEDDER, OPENAI_*, EMBEDDING_*). */
  readonly serviceEnv: Record<string, string>;
  /** Embedding requests received, failed ones included. */
  readonly requests: number;
  /** Inputs embedded (in requests answered 200). */
  readonly inputs: number;
  /** Inputs per request answered 200, in arrival order. */
  readonly batches: readonly number[];
  /** When each embedding request arrived (performance.now()), in order. */
  readonly arrivals: readonly number[];
  /** Most requests in progress at one time. */
  readonly maxInFlight: number;
  /** Answers the next `n` embedding requests with `failure` (an HTTP status, "reset", "wrong-dimensions"), or never ("stall": until the client gives up or the server stops). */
  failNext(n: number, failure: Failure, headers?: Record<string, string>): void;
  /** Changes the delay before each answer (`delayMs`) from the next request on: a server turning slow, or fast again. */
  setDelay(ms: number): void;
  /** Zeroes the counters and forgets pending failures. */
  reset(): void;
  stop(): Promise<void>;
}

/** The vector the server gives `text`; exported so tests can predict rankings. */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const v = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    let h = 0x811c9dc5; // FNV-1a
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193) >>> 0;
    const at = h % dimensions;
    v[at] = (v[at] ?? 0) + (h >>> 31 === 1 ? -1 : 1);
  }
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  // Text without words still gets a unit vector, as a real model would give.
  return norm === 0 ? v.map((_, i) => (i === 0 ? 1 : 0)) : v.map((x) => x / norm);
}

function toBase64(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((x, i) => bytes.writeFloatLE(x, i * 4));
  return bytes.toString("base64");
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

const invalid = (message: string, type = "invalid_request_error") => ({ error: { message, type, param: null, code: null } });

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

export async function startOpenAIServer(options: OpenAIServerOptions = {}): Promise<OpenAIServer> {
  const limits = {
    inputs: options.maxInputs ?? 2048,
    requestTokens: options.maxTokensPerRequest ?? 300_000,
    inputTokens: options.maxTokensPerInput ?? 8192,
  };
  const stats = { requests: 0, inputs: 0, batches: [] as number[], arrivals: [] as number[], inFlight: 0, maxInFlight: 0 };
  let failures: { failure: Failure; headers: Record<string, string> }[] = [];
  let delayMs = options.delayMs ?? 0;

  async function embeddings(req: IncomingMessage, res: ServerResponse): Promise<void> {
    stats.requests++;
    stats.arrivals.push(performance.now());
    const body = await readBody(req);
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    const injected = failures.shift();
    if (injected?.failure === "reset") return void req.socket.destroy();
    if (injected?.failure === "stall") return;
    if (typeof injected?.failure === "number") {
      const status = injected.failure;
      return sendJson(
        res,
        status,
        invalid(`injected failure ${status}`, status === 429 ? "rate_limit_error" : "server_error"),
        injected.headers,
      );
    }
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendJson(res, 401, invalid("Incorrect API key provided.", "invalid_request_error"));
    }
    let request: { input?: unknown; model?: unknown; dimensions?: unknown; encoding_format?: unknown };
    try {
      request = JSON.parse(body) as typeof request;
    } catch {
      return sendJson(res, 400, invalid("We could not parse the JSON body of your request."));
    }
    const input = typeof request.input === "string" ? [request.input] : request.input;
    if (!Array.isArray(input) || input.length === 0 || !input.every((t) => typeof t === "string" && t.length > 0)) {
      return sendJson(res, 400, invalid("'$.input' is invalid: expected a non-empty string or array of non-empty strings"));
    }
    if (typeof request.model !== "string" || request.model === "") return sendJson(res, 400, invalid("you must provide a model parameter"));
    if (input.length > limits.inputs) {
      return sendJson(res, 400, invalid(`'$.input' is invalid: at most ${limits.inputs} inputs per request, got ${input.length}`));
    }
    const tokens = (input as string[]).map((t) => countTokens(t));
    const longest = Math.max(...tokens);
    if (longest > limits.inputTokens) {
      return sendJson(
        res,
        400,
        invalid(`This model's maximum context length is ${limits.inputTokens} tokens, however you requested ${longest} tokens`),
      );
    }
    const total = tokens.reduce((a, b) => a + b, 0);
    if (total > limits.requestTokens) {
      return sendJson(
        res,
        400,
        invalid(`Requested ${total} tokens, max ${limits.requestTokens} tokens per request`, "max_tokens_per_request"),
      );
    }
    const asked = request.dimensions;
    if (asked !== undefined && !(Number.isInteger(asked) && (asked as number) > 0))
      return sendJson(res, 400, invalid("'dimensions' must be a positive integer"));
    const dimensions = (asked as number | undefined) ?? options.dimensions ?? 1536;
    const length = injected?.failure === "wrong-dimensions" ? dimensions + 1 : dimensions;
    const base64 = request.encoding_format === "base64";
    stats.inputs += input.length;
    stats.batches.push(input.length);
    sendJson(res, 200, {
      object: "list",
      data: (input as string[]).map((text, index) => {
        const vector = fakeEmbedding(text, length);
        return { object: "embedding", index, embedding: base64 ? toBase64(vector) : vector };
      }),
      model: request.model,
      usage: { prompt_tokens: total, total_tokens: total },
    });
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (req.method !== "POST" || (path !== "/v1/embeddings" && path !== "/embeddings")) {
      return sendJson(res, 404, invalid(`Unknown request URL: ${req.method} ${path}`));
    }
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    embeddings(req, res)
      .catch((err: unknown) => {
        if (!res.headersSent) sendJson(res, 500, invalid(String(err), "server_error"));
      })
      .finally(() => stats.inFlight--);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const baseUrl = `http://127.0.0.1:${port}/v1`;
  return {
    baseUrl,
    serviceEnv: {
      EMBEDDER: "openai",
      OPENAI_BASE_URL: baseUrl,
      OPENAI_API_KEY: options.apiKey ?? "test-key",
      EMBEDDING_MODEL: "text-embedding-3-small",
      EMBEDDING_DIMENSIONS: String(options.dimensions ?? 1536),
    },
    get requests() {
      return stats.requests;
    },
    get inputs() {
      return stats.inputs;
    },
    get batches() {
      return stats.batches;
    },
    get arrivals() {
      return stats.arrivals;
    },
    get maxInFlight() {
      return stats.maxInFlight;
    },
    failNext(n, failure, headers = {}) {
      for (let i = 0; i < n; i++) failures.push({ failure, headers });
    },
    setDelay(ms) {
      delayMs = ms;
    },
    reset() {
      Object.assign(stats, { requests: 0, inputs: 0, batches: [], arrivals: [], maxInFlight: stats.inFlight });
      failures = [];
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
