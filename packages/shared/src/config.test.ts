import { describe, expect, it } from "vitest";
import path from "node:path";
import { loadConfig } from "./config.ts";
import { ConfigError } from "./errors.ts";
import { DEFAULT_FUSION } from "./search/fusion.ts";

describe("loadConfig", () => {
  it("gives the documented defaults", () => {
    const c = loadConfig({});
    expect(c.http).toMatchObject({ port: 8080, host: "127.0.0.1", maxUploadBytes: 50 * 1024 * 1024, maxBodyBytes: 10 * 1024 * 1024 });
    expect(c.dataDir).toBe(path.resolve("./data"));
    expect(c.queue).toEqual({ kind: "local", embeddedWorker: true, redisUrl: "redis://127.0.0.1:6379", prefix: "bull", concurrency: 4 });
    expect(c.blobStore.kind).toBe("fs");
    expect(c.index.kind).toBe("lancedb");
    expect(c.embedder.kind).toBe("none");
    expect(c.auth.tokens).toBeUndefined();
    expect(c.ingest).toEqual({ chunkTokens: 512, overlapTokens: 64 });
    expect(c.search.maxK).toBe(100);
    expect(c.search.fusion).toEqual(DEFAULT_FUSION);
  });

  it("reads the embeddings requests' size and timeout", () => {
    expect(loadConfig({}).embedder).toMatchObject({ maxBatch: 512, requestTimeoutMs: 60_000 });
    expect(loadConfig({ EMBEDDING_BATCH_SIZE: "16", EMBEDDING_TIMEOUT_MS: "600000" }).embedder).toMatchObject({ maxBatch: 16, requestTimeoutMs: 600_000 });
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

  it.each([
    [{ PORT: "eighty" }, /PORT/],
    [{ PORT: "70000" }, /PORT/],
    [{ LOG_LEVEL: "loud" }, /LOG_LEVEL/],
    [{ API_TOKENS: "short" }, /API_TOKENS: each token must be at least 16 characters/],
    [{ API_TOKENS: "long-enough-token-123:read+delete" }, /API_TOKENS: unknown scope "delete"/],
    [{ QUEUE: "kafka" }, /QUEUE/],
    [{ EMBEDDER: "openai" }, /EMBEDDER=openai needs OPENAI_API_KEY/],
    [{ CHUNK_TOKENS: "100", CHUNK_OVERLAP_TOKENS: "100" }, /CHUNK_OVERLAP_TOKENS \(100\) must be smaller than CHUNK_TOKENS \(100\)/],
    [{ EMBEDDED_WORKER: "yes" }, /EMBEDDED_WORKER/],
    [{ HYBRID_DEPTH: "0" }, /HYBRID_DEPTH/],
    [{ EMBEDDING_BATCH_SIZE: "4096" }, /EMBEDDING_BATCH_SIZE/],
    [{ HYBRID_DENSE_WEIGHT: "0" }, /HYBRID_DENSE_WEIGHT/],
    [{ HYBRID_LEXICAL_WEIGHT: "heavy" }, /HYBRID_LEXICAL_WEIGHT/],
  ])("refuses %j, naming the variable", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
