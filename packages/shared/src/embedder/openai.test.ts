import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIServer, fakeEmbedding, type OpenAIServer } from "../../test-support/openai-server.ts";
import { UnavailableError } from "../errors.ts";
import { countTokens } from "../chunk/tokenizer.ts";
import { MemoryEmbeddingCache } from "./cache.ts";
import { DimensionMismatchError, EmbeddingRejectedError } from "../errors.ts";
import { OpenAIEmbedder, type OpenAIEmbedderOptions } from "./openai.ts";
import { retryAfterMs } from "./retry.ts";

const DIMS = 16;
const MODEL = "text-embedding-3-small";
let server: OpenAIServer;

beforeAll(async () => {
  server = await startOpenAIServer({ apiKey: "sk-test" });
});
afterAll(() => server.stop());
beforeEach(() => server.reset());

const embedder = (options: Partial<OpenAIEmbedderOptions> = {}) =>
  new OpenAIEmbedder({
    apiKey: "sk-test",
    baseUrl: server.baseUrl,
    model: MODEL,
    dimensions: DIMS,
    retry: { baseDelayMs: 10, maxDelayMs: 50, deadlineMs: 2_000 },
    ...options,
  });

/** What the server's vector for `text` looks like after the embedder's Float32 rounding. */
const expected = (text: string, dims = DIMS) => Array.from(Float32Array.from(fakeEmbedding(text, dims)));

describe("OpenAIEmbedder: batching", () => {
  it("splits 5,000 texts within the input and token limits and keeps their order", async () => {
    // ~150 tokens each: 2,048 of them would exceed 300,000 tokens, so the token budget binds.
    const texts = Array.from({ length: 5000 }, (_, i) => `document ${i} ` + "alpha beta gamma delta ".repeat(37));
    const perText = countTokens(texts[0] as string);
    expect(perText * 2048).toBeGreaterThan(300_000);
    const vectors = await embedder({ maxBatch: 2048, maxBatchTokens: 300_000 }).embed(texts);
    expect(vectors).toHaveLength(5000);
    texts.forEach((t, i) => expect(vectors[i]).toEqual(expected(t)));
    expect(server.inputs).toBe(5000);
    expect(server.batches.every((n) => n <= 2048 && n * perText <= 300_000 * 1.01)).toBe(true);
    expect(server.batches.length).toBeGreaterThanOrEqual(3);
  });

  it("respects a smaller maxBatch and bounds concurrency", async () => {
    const slow = await startOpenAIServer({ delayMs: 30, dimensions: 8 });
    try {
      const e = new OpenAIEmbedder({ baseUrl: slow.baseUrl, model: "m", dimensions: 8, maxBatch: 10, concurrency: 3 });
      const texts = Array.from({ length: 95 }, (_, i) => `text number ${i}`);
      const vectors = await e.embed(texts);
      expect(vectors).toEqual(texts.map((t) => expected(t, 8)));
      expect(slow.batches).toHaveLength(10);
      expect(Math.max(...slow.batches)).toBe(10);
      expect(slow.maxInFlight).toBeLessThanOrEqual(3);
      expect(slow.maxInFlight).toBeGreaterThan(1);
    } finally {
      await slow.stop();
    }
  });

  it("sends a repeated text once, makes no request for nothing, and gives empty text a zero vector", async () => {
    const e = embedder();
    expect(await e.embed([])).toEqual([]);
    expect(server.requests).toBe(0);
    const vectors = await e.embed(["same words", "", "same words"]);
    expect(server.inputs).toBe(1);
    expect(vectors[0]).toEqual(vectors[2]);
    expect(vectors[1]).toEqual(new Array(DIMS).fill(0));
  });

  it("gives similar texts similar vectors (the test server's contract)", async () => {
    const [a, b, c] = await embedder().embed(["the cat sat on the mat", "the cat sat on a mat", "quarterly revenue report"]);
    const dot = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * (y[i] ?? 0), 0);
    expect(dot(a!, b!)).toBeGreaterThan(dot(a!, c!));
  });
});

describe("OpenAIEmbedder: cache", () => {
  it("a second embed of the same texts sends nothing; another model or size misses", async () => {
    const cache = new MemoryEmbeddingCache();
    const texts = ["one fish", "two fish", "red fish"];
    const first = await embedder({ cache }).embed(texts);
    expect(server.requests).toBe(1);
    expect(await embedder({ cache }).embed([...texts].reverse())).toEqual([...first].reverse());
    expect(server.requests).toBe(1);

    await embedder({ cache }).embed(["one fish", "blue fish"]);
    expect(server.inputs).toBe(4); // only "blue fish" was new

    await embedder({ cache, model: "text-embedding-3-large" }).embed(texts);
    expect(server.inputs).toBe(7);
    await embedder({ cache, dimensions: 8 }).embed(texts);
    expect(server.inputs).toBe(10);
  });

  it("keeps the batches that succeeded when a later one fails, so a retry pays only for the rest", async () => {
    const strict = await startOpenAIServer({ maxTokensPerInput: 50, dimensions: 8 });
    try {
      const cache = new MemoryEmbeddingCache();
      const e = new OpenAIEmbedder({ baseUrl: strict.baseUrl, model: "m", dimensions: 8, cache, maxBatch: 10, concurrency: 1 });
      const good = Array.from({ length: 19 }, (_, i) => `chunk ${i}`);
      const tooLong = "word ".repeat(100);
      // Batch 1 (10 texts) succeeds; batch 2 holds the text over the server's per-input limit.
      await expect(e.embed([...good.slice(0, 10), tooLong, ...good.slice(10)])).rejects.toThrow(/maximum context length is 50 tokens/);
      expect(cache.size).toBe(10);
      expect(strict.inputs).toBe(10);
      expect(await e.embed(good)).toEqual(good.map((t) => expected(t, 8)));
      expect(strict.inputs).toBe(19);
    } finally {
      await strict.stop();
    }
  });
});

describe("OpenAIEmbedder: failures", () => {
  it("honours Retry-After on 429", async () => {
    server.failNext(1, 429, { "retry-after": "1" });
    const started = performance.now();
    const [v] = await embedder().embed(["rate limited"]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
    expect(v).toEqual(expected("rate limited"));
    expect(server.requests).toBe(2);
  });

  it("honours retry-after-ms, and a 429 holds back the other batches' retries too", async () => {
    // Two batches at once: one gets a 429 asking for 300 ms, the other a 500 that alone would
    // be retried after ~50 ms; both retries must wait for the 429's window.
    server.failNext(1, 429, { "retry-after-ms": "300" });
    server.failNext(1, 500);
    const started = performance.now();
    await embedder({ maxBatch: 1, concurrency: 2, retry: { baseDelayMs: 50, deadlineMs: 2_000 } }).embed(["a b", "c d"]);
    expect(server.requests).toBe(4);
    for (const at of server.arrivals.slice(2)) expect(at - started).toBeGreaterThanOrEqual(290);
  });

  it("retries 500, 503 and a dropped connection", async () => {
    server.failNext(1, 500);
    server.failNext(1, 503);
    server.failNext(1, "reset");
    const [v] = await embedder().embed(["flaky"]);
    expect(v).toEqual(expected("flaky"));
    expect(server.requests).toBe(4);
  });

  it("gives up with UnavailableError, carrying the cause, within the deadline", async () => {
    server.failNext(1000, 502);
    const started = performance.now();
    // A deadline of 2 s leaves room for several attempts 20-100 ms apart on a loaded machine too.
    const error = await embedder({ retry: { baseDelayMs: 20, maxDelayMs: 100, deadlineMs: 2_000 } })
      .embed(["down"])
      .catch((e: unknown) => e);
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).kind).toBe("unavailable");
    expect((error as Error).message).toMatch(/^embedding service unavailable: 502 .*gave up after \d+ attempts/);
    expect((error as Error).cause).toBeDefined();
    // Without the deadline the 1,000 failures would be retried for minutes.
    expect(elapsed).toBeLessThan(4_000);
    expect(server.requests).toBeGreaterThan(2);
  });

  it("names the failure before the attempt the deadline cut short", async () => {
    server.failNext(1, 502);
    server.failNext(1, "stall");
    const error = await embedder({ retry: { baseDelayMs: 20, maxDelayMs: 100, deadlineMs: 500 } })
      .embed(["down"])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toMatch(
      /^embedding service unavailable: 502 .*\(gave up after 2 attempts in \d+ ms; the last attempt was cut at the deadline\)$/,
    );
    expect(server.requests).toBe(2);
  });

  it("cuts an attempt short at the deadline, however long the request timeout", async () => {
    const stalled = await startOpenAIServer({ delayMs: 60_000 });
    try {
      const e = new OpenAIEmbedder({
        baseUrl: stalled.baseUrl,
        model: "m",
        dimensions: 4,
        requestTimeoutMs: 60_000,
        retry: { deadlineMs: 300 },
      });
      await expect(e.embed(["slow"])).rejects.toThrow(/^embedding service unavailable: .*gave up after 1 attempt/);
      expect(stalled.requests).toBe(1);
    } finally {
      await stalled.stop();
    }
  }, 10_000); // the guard: without the cut, the attempt would wait a minute

  it("gives up at once when Retry-After asks for more than the deadline allows", async () => {
    server.failNext(1, 429, { "retry-after": "3600" });
    const started = performance.now();
    await expect(embedder().embed(["later"])).rejects.toThrow(/unavailable: 429 .*asked to wait 3600000 ms/);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it("fails with UnavailableError when nothing listens", async () => {
    const gone = await startOpenAIServer();
    await gone.stop();
    const e = new OpenAIEmbedder({ baseUrl: gone.baseUrl, model: "m", dimensions: 4, retry: { baseDelayMs: 10, deadlineMs: 200 } });
    await expect(e.embed(["x"])).rejects.toThrow(/embedding service unavailable: ECONNREFUSED/);
  });

  it("fails at once on 400, and on a wrong API key", async () => {
    server.failNext(1, 400);
    const error = await embedder()
      .embed(["bad"])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingRejectedError);
    expect((error as EmbeddingRejectedError).upstreamStatus).toBe(400);
    expect(server.requests).toBe(1);
    await expect(embedder({ apiKey: "sk-wrong" }).embed(["x"])).rejects.toThrow(/rejected .*401 Incorrect API key/);
    expect(server.requests).toBe(2);
  });

  it("stops the other batches when one fails for good", async () => {
    server.failNext(1, 400);
    await expect(embedder({ maxBatch: 1, concurrency: 1 }).embed(["a", "b", "c", "d"])).rejects.toBeInstanceOf(EmbeddingRejectedError);
    expect(server.requests).toBe(1);
  });

  it("names model, expected and actual dimensions on a mismatch, and caches nothing", async () => {
    const cache = new MemoryEmbeddingCache();
    server.failNext(1, "wrong-dimensions");
    const error = await embedder({ cache })
      .embed(["x"])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DimensionMismatchError);
    expect((error as Error).message).toContain(
      `"${MODEL}" returned 17-dimensional vectors but EMBEDDING_DIMENSIONS (the index) expects 16`,
    );
    expect(cache.size).toBe(0);
    // A model that cannot shorten its vectors (no `dimensions` sent) shows the same at probe time.
    const native = new OpenAIEmbedder({ baseUrl: server.baseUrl, apiKey: "sk-test", model: "nomic-embed-text", dimensions: 768 });
    await expect(native.probe()).rejects.toThrow(/returned 1536-dimensional vectors .* expects 768/);
  });

  it("refuses a configuration without a key for api.openai.com, and batches over the API limit", () => {
    expect(() => new OpenAIEmbedder({ model: MODEL, dimensions: 8 })).toThrow(/OPENAI_API_KEY/);
    expect(() => embedder({ maxBatch: 4096 })).toThrow(/maxBatch/);
  });
});

describe("retryAfterMs", () => {
  const h = (init: Record<string, string>) => new Headers(init);
  it("reads retry-after-ms, seconds and HTTP dates", () => {
    expect(retryAfterMs(h({ "retry-after-ms": "250" }))).toBe(250);
    expect(retryAfterMs(h({ "retry-after": "2" }))).toBe(2000);
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(retryAfterMs(h({ "retry-after": "Wed, 01 Jan 2025 00:00:05 GMT" }), now)).toBe(5000);
    expect(retryAfterMs(h({ "retry-after": "soon" }))).toBeUndefined();
    expect(retryAfterMs(h({}))).toBeUndefined();
  });
});
