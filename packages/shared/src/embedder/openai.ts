/**
 * Embeddings from OpenAI or any server speaking its protocol (vLLM, Ollama, TEI, LocalAI...).
 *
 * Retries are ours, not the SDK's (it is built with maxRetries 0): the SDK bounds retries by
 * count, not time, and ignores a Retry-After longer than 60 s (it then retries early, earning
 * another 429). Here a batch retries 408, 429, 5xx and network errors with capped exponential
 * backoff, or exactly the wait the server names (retry-after-ms, Retry-After in seconds or as
 * a date); a 429's wait also holds back the other batches in flight. At `deadlineMs` (an attempt
 * in flight is cut short), or when the server asks for a wait that would end past it, the call
 * fails with UnavailableError.
 */
import OpenAI, { APIConnectionTimeoutError, APIError } from "openai";
import { setTimeout as sleep } from "node:timers/promises";
import { DimensionMismatchError, EmbeddingRejectedError, UnavailableError } from "../errors.ts";
import type { Embedder } from "../ports.ts";
import { packBatches } from "../batches.ts";
import { countTokens } from "../chunk/tokenizer.ts";
import { textHash, type EmbeddingCache } from "./cache.ts";
import { backoffMs, describeFailure, retryAfterMs, retryable } from "./retry.ts";

/** OpenAI's limits on one embeddings request. */
export const MAX_INPUTS_PER_REQUEST = 2048;
export const MAX_TOKENS_PER_REQUEST = 300_000;

export interface OpenAIEmbedderOptions {
  /** Required for api.openai.com (the default baseUrl); a local server, e.g. http://localhost:11434/v1, may need none. */
  apiKey?: string;
  baseUrl?: string;
  model: string;
  dimensions: number;
  cache?: EmbeddingCache;
  /** Inputs per request (default 512, at most 2048). */
  maxBatch?: number;
  /** Estimated (cl100k) tokens per request; default 250,000, under OpenAI's 300,000 with room for a different tokenizer. */
  maxBatchTokens?: number;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** One attempt's timeout (default 60 s). */
  requestTimeoutMs?: number;
  /** Time within which a batch succeeds or gives up (default 120 s), and the backoff's first and largest steps. */
  retry?: { deadlineMs?: number; baseDelayMs?: number; maxDelayMs?: number };
  /**
   * Whether to send `dimensions` (shortened vectors). Default: for OpenAI's text-embedding-3
   * models only, since other servers often reject the parameter for models that cannot shorten.
   */
  sendDimensions?: boolean;
}

export class OpenAIEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  private readonly client: OpenAI;
  private readonly cache: EmbeddingCache | undefined;
  /** The cache's model key: one model gives different vectors per requested size. */
  private readonly cacheKey: string;
  private readonly limits: { inputs: number; tokens: number; concurrency: number; timeoutMs: number };
  private readonly retry: { deadlineMs: number; baseDelayMs: number; maxDelayMs: number };
  private readonly sendDimensions: boolean;
  /** Set by a 429's Retry-After: no batch starts before it. */
  private notBefore = 0;

  constructor(options: OpenAIEmbedderOptions) {
    if (!options.apiKey && !options.baseUrl) throw new Error("OPENAI_API_KEY is required unless OPENAI_BASE_URL names another server");
    const maxBatch = options.maxBatch ?? 512;
    if (!(Number.isInteger(maxBatch) && maxBatch >= 1 && maxBatch <= MAX_INPUTS_PER_REQUEST)) {
      throw new RangeError(`maxBatch must be an integer from 1 to ${MAX_INPUTS_PER_REQUEST}, got ${maxBatch}`);
    }
    this.model = options.model;
    this.dimensions = options.dimensions;
    this.cache = options.cache;
    this.cacheKey = `${options.model}@${options.dimensions}`;
    this.limits = {
      inputs: maxBatch,
      tokens: Math.min(options.maxBatchTokens ?? 250_000, MAX_TOKENS_PER_REQUEST),
      concurrency: Math.max(1, options.concurrency ?? 4),
      timeoutMs: options.requestTimeoutMs ?? 60_000,
    };
    this.retry = { deadlineMs: 120_000, baseDelayMs: 500, maxDelayMs: 8_000, ...options.retry };
    this.sendDimensions = options.sendDimensions ?? /^text-embedding-3/.test(options.model);
    // Explicit values, so that the SDK does not fall back to reading OPENAI_* from process.env.
    this.client = new OpenAI({
      apiKey: options.apiKey || "unused",
      baseURL: options.baseUrl ?? "https://api.openai.com/v1",
      ...{ organization: null, project: null, adminAPIKey: null, webhookSecret: null },
      maxRetries: 0,
      timeout: this.limits.timeoutMs,
    });
  }

  async embed(texts: string[]): Promise<number[][]> {
    const hashes = texts.map(textHash);
    const vectors = new Map<string, ArrayLike<number>>();
    for (const [hash, vector] of this.cache?.getMany(this.cacheKey, [...new Set(hashes)]) ?? []) {
      if (vector.length === this.dimensions) vectors.set(hash, vector);
    }
    const missing = new Map<string, string>();
    texts.forEach((text, i) => {
      const hash = hashes[i] as string;
      // OpenAI refuses an empty input; nothing in it can match a query anyway.
      if (text === "") vectors.set(hash, new Float32Array(this.dimensions));
      else if (!vectors.has(hash)) missing.set(hash, text);
    });
    await this.runBatches(this.batch([...missing]), vectors);
    // Float32 whether fresh or cached, so a re-load yields exactly the vectors of the first load.
    return hashes.map((hash) => Array.from(Float32Array.from(vectors.get(hash) as ArrayLike<number>)));
  }

  async close(): Promise<void> {
    this.cache?.close();
  }

  /** One small uncached request: fails now, not at the first document, if the model or key is wrong. */
  async probe(): Promise<void> {
    await this.request(["dimension probe"], new AbortController().signal);
  }

  /** In order, each within the input and token limits; a text too long for any batch goes alone (and the server says why). */
  private batch(items: [hash: string, text: string][]): [string, string][][] {
    return packBatches(items, (item) => countTokens(item[1]), { items: this.limits.inputs, cost: this.limits.tokens });
  }

  private async runBatches(batches: [string, string][][], vectors: Map<string, ArrayLike<number>>): Promise<void> {
    const abort = new AbortController();
    let next = 0;
    let failure: { error: unknown } | undefined;
    const worker = async () => {
      while (!failure && next < batches.length) {
        const batch = batches[next++] as [string, string][];
        try {
          const result = await this.request(
            batch.map(([, text]) => text),
            abort.signal,
          );
          const entries = batch.map(([hash], i) => [hash, result[i] as number[]] as const);
          // Cached batch by batch: when a later batch fails, a retry pays only for the rest.
          this.cache?.setMany(this.cacheKey, entries);
          for (const [hash, vector] of entries) vectors.set(hash, vector);
        } catch (error) {
          failure ??= { error };
          abort.abort();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.limits.concurrency, batches.length) }, worker));
    if (failure) throw failure.error;
  }

  /**
   * One batch, retried until it succeeds, fails for good, or the deadline passes: no attempt
   * runs past the deadline (the last one's timeout is what is left of it), so it bounds the call.
   * When that cut ends the last attempt, the error names the failure before it: the cut says
   * only that time ran out, the earlier answer says why.
   */
  private async request(input: string[], signal: AbortSignal): Promise<number[][]> {
    const started = Date.now();
    let previous: unknown;
    for (let attempt = 1; ; attempt++) {
      const hold = this.notBefore - Date.now();
      if (hold > 0) {
        if (Date.now() - started + hold >= this.retry.deadlineMs) {
          throw new UnavailableError(
            `embedding service unavailable: rate limited for another ${Math.round(hold)} ms, past the deadline of ${this.retry.deadlineMs} ms`,
          );
        }
        await sleep(hold, undefined, { signal });
      }
      const timeout = Math.min(this.limits.timeoutMs, this.retry.deadlineMs - (Date.now() - started));
      try {
        const response = await this.client.embeddings.create(
          { model: this.model, input, encoding_format: "float", ...(this.sendDimensions ? { dimensions: this.dimensions } : {}) },
          { signal, timeout: Math.max(1, timeout) },
        );
        return this.vectorsOf(response, input.length);
      } catch (err) {
        if (signal.aborted) throw err;
        if (!retryable(err)) {
          if (!(err instanceof APIError)) throw err;
          throw new EmbeddingRejectedError(`embedding request rejected (model "${this.model}"): ${err.message}`, err.status, err);
        }
        const asked = err instanceof APIError ? retryAfterMs(err.headers) : undefined;
        const wait = asked ?? backoffMs(attempt, this.retry.baseDelayMs, this.retry.maxDelayMs);
        const elapsed = Date.now() - started;
        if (elapsed + wait > this.retry.deadlineMs) {
          const cut = err instanceof APIConnectionTimeoutError && timeout < this.limits.timeoutMs && previous !== undefined;
          const why = cut
            ? "; the last attempt was cut at the deadline"
            : asked !== undefined && elapsed + asked > this.retry.deadlineMs
              ? `; it asked to wait ${Math.round(asked)} ms`
              : "";
          throw new UnavailableError(
            `embedding service unavailable: ${describeFailure(cut ? previous : err)} (gave up after ${attempt} attempt${attempt > 1 ? "s" : ""} in ${elapsed} ms${why})`,
            err,
          );
        }
        previous = err;
        if (asked !== undefined && err instanceof APIError && err.status === 429)
          this.notBefore = Math.max(this.notBefore, Date.now() + wait);
        await sleep(wait, undefined, { signal });
      }
    }
  }

  private vectorsOf(response: OpenAI.Embeddings.CreateEmbeddingResponse, count: number): number[][] {
    const data = Array.isArray(response?.data) ? response.data : [];
    const out: number[][] = new Array(count);
    for (const item of data) {
      const vector = item?.embedding as unknown;
      if (Number.isInteger(item?.index) && item.index >= 0 && item.index < count && Array.isArray(vector))
        out[item.index] = vector as number[];
    }
    for (let i = 0; i < count; i++) {
      const vector = out[i];
      if (vector === undefined) {
        throw new EmbeddingRejectedError(
          `embedding service returned no vector for input ${i} of ${count} (model "${this.model}")`,
          undefined,
          undefined,
        );
      }
      if (vector.length !== this.dimensions) throw DimensionMismatchError.fromModel(this.model, this.dimensions, vector.length);
    }
    return out;
  }
}
