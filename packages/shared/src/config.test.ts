import { describe, expect, it } from "vitest";
import path from "node:path";
import { loadConfig } from "./config.ts";
import { ConfigError } from "./errors.ts";
import { DEFAULT_FUSION } from "./search/fusion.ts";

describe("loadConfig", () => {
  it("gives the documented defaults", () => {
    const c = loadConfig({});
    expect(c.http).toEqual({
      corsOrigins: [],
      port: 8080,
      host: "127.0.0.1",
      maxUploadBytes: 50 * 1024 * 1024,
      maxBodyBytes: 10 * 1024 * 1024,
      headersTimeoutMs: 20_000,
      requestTimeoutMs: 300_000,
    });
    expect(c.dataDir).toBe(path.resolve("./data"));
    expect(c.queue).toEqual({
      kind: "local",
      embeddedWorker: true,
      redisUrl: "redis://127.0.0.1:6379",
      prefix: "bull",
      concurrency: 128,
      batchSize: 64,
    });
    expect(c.blobStore.kind).toBe("fs");
    expect(c.index.kind).toBe("lancedb");
    expect(c.embedder.kind).toBe("none");
    expect(c.auth.tokens).toBeUndefined();
    expect(c.ingest).toEqual({ chunkTokens: 512, overlapTokens: 64, threads: 1 });
    expect(c.search.maxK).toBe(100);
    expect(c.http.corsOrigins).toEqual([]);
    expect(c.search.fusion).toEqual(DEFAULT_FUSION);
  });

  it("reads the lost-job recovery's interval, which is its grace too, and refuses what is not one", () => {
    expect(loadConfig({}).recovery).toEqual({ intervalMs: 60_000, lostAfterMs: 60_000 });
    expect(loadConfig({ RECOVERY_INTERVAL_S: "5" }).recovery).toEqual({ intervalMs: 5_000, lostAfterMs: 5_000 });
    // Off: workers run no recovery, and the doctor still calls a job lost after a minute.
    expect(loadConfig({ RECOVERY_INTERVAL_S: "0" }).recovery).toEqual({ intervalMs: 0, lostAfterMs: 60_000 });
    for (const bad of ["-1", "1.5", "abc", "86401"]) {
      expect(() => loadConfig({ RECOVERY_INTERVAL_S: bad }), bad).toThrow(/RECOVERY_INTERVAL_S/);
    }
  });

  it("reads CORS_ORIGINS as a list of origins, or * alone", () => {
    expect(loadConfig({ CORS_ORIGINS: " https://app.example.com ,http://localhost:5173," }).http.corsOrigins).toEqual([
      "https://app.example.com",
      "http://localhost:5173",
    ]);
    expect(loadConfig({ CORS_ORIGINS: "https://app.example.com,*" }).http.corsOrigins).toEqual(["*"]);
    expect(loadConfig({ CORS_ORIGINS: "" }).http.corsOrigins).toEqual([]);
  });

  it("reads the embeddings requests' size and timeout", () => {
    expect(loadConfig({}).embedder).toMatchObject({ maxBatch: 512, requestTimeoutMs: 60_000 });
    expect(loadConfig({ EMBEDDING_BATCH_SIZE: "16", EMBEDDING_TIMEOUT_MS: "600000" }).embedder).toMatchObject({
      maxBatch: 16,
      requestTimeoutMs: 600_000,
    });
  });

  it("reads the hybrid fusion's depth and weights", () => {
    const c = loadConfig({ HYBRID_DEPTH: "250", HYBRID_LEXICAL_WEIGHT: "0.5", HYBRID_DENSE_WEIGHT: "2" });
    expect(c.search.fusion).toEqual({ depth: 250, lexicalWeight: 0.5, denseWeight: 2 });
  });

  it("parses tokens with and without scopes", () => {
    const c = loadConfig({ API_TOKENS: " reader-0123456789abcdef:read , admin-0123456789abcdef ,writer-0123456789abcdef:read+write" });
    expect(c.auth.tokens?.map((t) => [t.token, [...t.scopes].sort()])).toEqual([
      ["reader-0123456789abcdef", ["read"]],
      ["admin-0123456789abcdef", ["admin", "read", "write"]],
      ["writer-0123456789abcdef", ["read", "write"]],
    ]);
  });

  it("parses tokens restricted to collections, by name or prefix", () => {
    const c = loadConfig({ API_TOKENS: "team-a-0123456789abcdef:read+write:kb+team-a-*,all-0123456789abcdef:read,every-0123456789abcdef" });
    expect(c.auth.tokens?.map((t) => [t.token, [...t.scopes].sort(), t.collections])).toEqual([
      ["team-a-0123456789abcdef", ["read", "write"], ["kb", "team-a-*"]],
      ["all-0123456789abcdef", ["read"], null],
      ["every-0123456789abcdef", ["admin", "read", "write"], null],
    ]);
  });

  it("turns JWT validation on with AUTH_JWKS_URL, and rate limits with RATE_LIMIT_PER_MIN", () => {
    expect(loadConfig({}).auth.jwt).toBeNull();
    expect(loadConfig({}).rateLimit).toEqual({ perMinute: 0, redisUrl: null, prefix: "bull" });
    const c = loadConfig({
      AUTH_JWKS_URL: "https://idp.example/jwks",
      AUTH_ISSUER: "https://idp.example/",
      AUTH_AUDIENCE: "docstore",
      RATE_LIMIT_PER_MIN: "120",
      QUEUE: "bullmq",
    });
    expect(c.auth.jwt).toEqual({
      jwksUrl: "https://idp.example/jwks",
      issuer: "https://idp.example/",
      audience: "docstore",
      collectionsClaim: null,
    });
    expect(c.rateLimit).toEqual({ perMinute: 120, redisUrl: "redis://127.0.0.1:6379", prefix: "bull" });
  });

  it.each([
    [{ PORT: "eighty" }, /PORT: expected a whole number from 0 to 65535, got 'eighty'$/m],
    [{ PORT: "70000" }, /PORT: expected a whole number from 0 to 65535, got '70000'$/m],
    [{ WORKER_CONCURRENCY: "1.5" }, /WORKER_CONCURRENCY: expected a whole number from 1 to \d+, got '1.5'$/m],
    [{ HYBRID_DENSE_WEIGHT: "heavy" }, /HYBRID_DENSE_WEIGHT: expected a number above 0 and at most 1000, got 'heavy'$/m],
    [{ LOG_LEVEL: "loud" }, /LOG_LEVEL/],
    [{ API_TOKENS: "short" }, /API_TOKENS: each token must be at least 16 characters/],
    [{ API_TOKENS: "long-enough-token-123:read+delete" }, /API_TOKENS: unknown scope "delete"/],
    [
      { API_TOKENS: "long-enough-token-123:read:kb/../x" },
      /API_TOKENS: "kb\/..\/x" is neither a collection name nor a prefix ending in \*/,
    ],
    [{ API_TOKENS: "long-enough-token-123:read:a*b" }, /API_TOKENS: "a\*b" is neither/],
    [{ API_TOKENS: "long-enough-token-123:read:kb:x" }, /API_TOKENS: an entry is token, token:scopes or token:scopes:collections/],
    [{ AUTH_JWKS_URL: "https://idp.example/jwks" }, /AUTH_JWKS_URL needs AUTH_ISSUER and AUTH_AUDIENCE/],
    [
      { AUTH_JWKS_URL: "https://idp.example/jwks", AUTH_ISSUER: "https://idp.example/" },
      /AUTH_JWKS_URL needs AUTH_ISSUER and AUTH_AUDIENCE/,
    ],
    [{ AUTH_AUDIENCE: "docstore" }, /AUTH_AUDIENCE is read only with AUTH_JWKS_URL/],
    [{ AUTH_JWKS_URL: "not a url", AUTH_ISSUER: "i", AUTH_AUDIENCE: "a" }, /AUTH_JWKS_URL/],
    [{ RATE_LIMIT_PER_MIN: "-1" }, /RATE_LIMIT_PER_MIN/],
    [{ QUEUE: "kafka" }, /QUEUE/],
    [{ EMBEDDER: "openai" }, /EMBEDDER=openai needs OPENAI_API_KEY/],
    [{ CHUNK_TOKENS: "100", CHUNK_OVERLAP_TOKENS: "100" }, /CHUNK_OVERLAP_TOKENS \(100\) must be smaller than CHUNK_TOKENS \(100\)/],
    [{ EMBEDDED_WORKER: "yes" }, /EMBEDDED_WORKER/],
    [{ CORS_ORIGINS: "https://app.example.com/" }, /CORS_ORIGINS: "https:\/\/app\.example\.com\/" is not an origin/],
    [{ CORS_ORIGINS: "app.example.com" }, /CORS_ORIGINS: "app\.example\.com" is not an origin/],
    [{ CORS_ORIGINS: "https://app.example.com/path" }, /CORS_ORIGINS: .* is not an origin/],
    [
      { HTTP_HEADERS_TIMEOUT_MS: "5000", HTTP_REQUEST_TIMEOUT_MS: "4000" },
      /HTTP_HEADERS_TIMEOUT_MS \(5000\) must not exceed HTTP_REQUEST_TIMEOUT_MS \(4000\)/,
    ],
    [{ HTTP_REQUEST_TIMEOUT_MS: "0" }, /HTTP_REQUEST_TIMEOUT_MS/],
    [{ HYBRID_DEPTH: "0" }, /HYBRID_DEPTH/],
    [{ EMBEDDING_BATCH_SIZE: "4096" }, /EMBEDDING_BATCH_SIZE/],
    [{ HYBRID_DENSE_WEIGHT: "0" }, /HYBRID_DENSE_WEIGHT/],
    [{ HYBRID_LEXICAL_WEIGHT: "heavy" }, /HYBRID_LEXICAL_WEIGHT/],
  ])("refuses %j, naming the variable", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
