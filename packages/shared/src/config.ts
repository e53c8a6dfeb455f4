import { z } from "zod";
import path from "node:path";
import { ConfigError } from "./errors.ts";
import { DEFAULT_CHUNK_OVERLAP_TOKENS, DEFAULT_CHUNK_TOKENS } from "./chunk/chunk.ts";
import { DEFAULT_FUSION } from "./search/fusion.ts";

export type Scope = "read" | "write" | "admin";
export const ALL_SCOPES: readonly Scope[] = ["read", "write", "admin"];

export interface ApiToken {
  token: string;
  scopes: ReadonlySet<Scope>;
  /**
   * The collections this token may use: names, or prefixes ending in `*` (`team-a-*`; `*` alone
   * is every collection). Null: every collection.
   */
  collections: readonly string[] | null;
}

/** A collection name, or a prefix of one followed by `*`. */
export const COLLECTION_PATTERN = /^(?:[A-Za-z0-9][A-Za-z0-9_-]{0,63}|[A-Za-z0-9_-]{0,63}\*)$/;

/**
 * A number read from the environment as Number() reads it, with a message in words naming what
 * was expected and what was given (zod's own says "expected number, received NaN").
 */
const numeric = (ok: (n: number) => boolean, expected: string) =>
  z.unknown().transform((raw, ctx) => {
    const n = Number(raw);
    if (ok(n)) return n;
    ctx.addIssue({ code: "custom", message: `expected ${expected}, got '${String(raw)}'` });
    return z.NEVER;
  });
const int = (min: number, max: number) =>
  numeric((n) => Number.isInteger(n) && n >= min && n <= max, `a whole number from ${min} to ${max}`);
const weight = () => numeric((n) => n > 0 && n <= 1000, "a number above 0 and at most 1000");
const matching = (pattern: RegExp, expected: string) => z.string().regex(pattern, expected);

/**
 * `token`, `token:scopes` or `token:scopes:collections`, comma-separated; scopes and collections
 * are each joined by `+` (neither a scope nor a collection name can hold a `+`).
 */
const tokensSchema = z
  .string()
  .optional()
  .transform((raw, ctx): ApiToken[] | undefined => {
    const entries = (raw ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    if (entries.length === 0) return undefined;
    const tokens: ApiToken[] = [];
    for (const entry of entries) {
      const [token = "", scopeList, collectionList, ...rest] = entry.split(":");
      if (token.length < 16) {
        ctx.addIssue({ code: "custom", message: "each token must be at least 16 characters long" });
        continue;
      }
      if (rest.length > 0) {
        ctx.addIssue({ code: "custom", message: "an entry is token, token:scopes or token:scopes:collections (a token holds no ':')" });
        continue;
      }
      const scopes = scopeList === undefined ? [...ALL_SCOPES] : scopeList.split("+");
      const unknown = scopes.filter((s) => !ALL_SCOPES.includes(s as Scope));
      if (unknown.length > 0 || scopes.length === 0) {
        ctx.addIssue({ code: "custom", message: `unknown scope "${unknown[0] ?? ""}" (use read, write, admin joined by +)` });
        continue;
      }
      const collections = collectionList === undefined ? null : collectionList.split("+");
      const bad = collections?.find((c) => !COLLECTION_PATTERN.test(c));
      if (bad !== undefined) {
        ctx.addIssue({ code: "custom", message: `"${bad}" is neither a collection name nor a prefix ending in * (join several with +)` });
        continue;
      }
      tokens.push({ token, scopes: new Set(scopes as Scope[]), collections });
    }
    return tokens;
  });

/** `*`, or origins (`scheme://host[:port]`, no path) that browsers may call the API from. */
const corsOriginsSchema = z
  .string()
  .optional()
  .transform((raw, ctx): string[] => {
    const entries = (raw ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    for (const entry of entries) {
      if (entry === "*") continue;
      let origin: string | null = null;
      try {
        origin = new URL(entry).origin;
      } catch {
        // not a URL at all
      }
      if (origin !== entry) {
        ctx.addIssue({
          code: "custom",
          message: `"${entry}" is not an origin: write scheme://host[:port] with no path or trailing slash, or * for any`,
        });
      }
    }
    return entries.includes("*") ? ["*"] : entries;
  });

/** Backends whose adapters exist in this version; the others are refused at start. */
const available = {
  QUEUE: ["local", "bullmq"],
  BLOB_STORE: ["fs", "s3"],
  INDEX: ["lancedb", "qdrant"],
  EMBEDDER: ["none", "openai"],
} as const;

const envSchema = z.object({
  PORT: int(0, 65535).default(8080),
  HOST: z.string().min(1).default("127.0.0.1"),
  DATA_DIR: z.string().min(1).default("./data"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  API_TOKENS: tokensSchema,
  CORS_ORIGINS: corsOriginsSchema,
  AUTH_JWKS_URL: z.string().url().optional(),
  AUTH_ISSUER: z.string().min(1).optional(),
  AUTH_AUDIENCE: z.string().min(1).optional(),
  AUTH_COLLECTIONS_CLAIM: z.string().min(1).optional(),
  RATE_LIMIT_PER_MIN: int(0, 1_000_000).default(0),
  QUEUE: z.enum(["local", "bullmq"]).default("local"),
  BLOB_STORE: z.enum(["fs", "s3"]).default("fs"),
  INDEX: z.enum(["lancedb", "qdrant"]).default("lancedb"),
  LANCEDB_CACHE_MB: int(16, 65536).default(256),
  // LanceDB's own, read by LanceDB from the process's environment: see setLanceThreads.
  LANCE_CPU_THREADS: z.string().optional(),
  LANCE_IO_CORE_RESERVATION: z.string().optional(),
  TOKIO_WORKER_THREADS: z.string().optional(),
  EMBEDDER: z.enum(["none", "openai"]).default("none"),
  CATALOG: z.enum(["sqlite", "redis"]).default("sqlite"),
  CHUNK_TOKENS: int(32, 8192).default(DEFAULT_CHUNK_TOKENS),
  CHUNK_OVERLAP_TOKENS: int(0, 4096).default(DEFAULT_CHUNK_OVERLAP_TOKENS),
  CHUNK_THREADS: int(0, 64).default(1),
  EXTRACT_TIMEOUT_MS: int(100, 3_600_000).default(60_000),
  EXTRACT_MEMORY_MB: int(64, 16_384).default(512),
  MAX_UNCOMPRESSED_BYTES: int(1024, 2 ** 40).default(200 * 1024 * 1024),
  MAX_ZIP_ENTRIES: int(1, 1_000_000).default(10_000),
  MAX_UPLOAD_BYTES: int(1, 2 ** 40).default(50 * 1024 * 1024),
  MAX_BODY_BYTES: int(1024, 2 ** 30).default(10 * 1024 * 1024),
  HTTP_HEADERS_TIMEOUT_MS: int(100, 600_000).default(20_000),
  HTTP_REQUEST_TIMEOUT_MS: int(100, 3_600_000).default(300_000),
  MAX_K: int(1, 10_000).default(100),
  WAIT_TIMEOUT_MS: int(100, 3_600_000).default(60_000),
  SHUTDOWN_TIMEOUT_MS: int(0, 600_000).default(10_000),
  EMBEDDED_WORKER: z.enum(["true", "false"], { message: "expected true or false" }).default("true"),
  REDIS_URL: z.string().url().default("redis://127.0.0.1:6379"),
  REDIS_PREFIX: matching(/^[A-Za-z0-9_.-]{1,64}$/, "letters, digits, '_', '.' or '-'").default("bull"),
  WORKER_CONCURRENCY: int(1, 4096).default(128),
  WORKER_BATCH_SIZE: int(1, 1024).default(64),
  WORKER_METRICS_PORT: int(0, 65535).default(9464),
  RECOVERY_INTERVAL_S: int(0, 86_400).default(60),
  S3_ENDPOINT: z.string().url().optional(),
  S3_REGION: z.string().min(1).default("us-east-1"),
  S3_BUCKET: matching(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "not a valid bucket name").optional(),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_FORCE_PATH_STYLE: z.enum(["true", "false"], { message: "expected true or false" }).default("false"),
  QDRANT_URL: z.string().url().default("http://127.0.0.1:6333"),
  QDRANT_API_KEY: z.string().min(1).optional(),
  QDRANT_COLLECTION: matching(/^[A-Za-z0-9_-]{1,255}$/, "letters, digits, '_' or '-'").default("docstore"),
  QDRANT_SHARDS: int(1, 1024).default(1),
  QDRANT_REPLICATION_FACTOR: int(1, 16).default(1),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.string().url().optional(),
  EMBEDDING_MODEL: z.string().min(1).default("text-embedding-3-small"),
  EMBEDDING_DIMENSIONS: int(1, 16384).default(1536),
  EMBEDDING_BATCH_SIZE: int(1, 2048).default(512),
  EMBEDDING_TIMEOUT_MS: int(1000, 3_600_000).default(60_000),
  EMBEDDING_QUERY_TIMEOUT_MS: int(100, 600_000).default(5000),
  HYBRID_DEPTH: int(1, 10_000).default(DEFAULT_FUSION.depth),
  HYBRID_LEXICAL_WEIGHT: weight().default(DEFAULT_FUSION.lexicalWeight),
  HYBRID_DENSE_WEIGHT: weight().default(DEFAULT_FUSION.denseWeight),
});

export type Env = Record<string, string | undefined>;

/** Every environment variable the service reads (docs/configuration.md and the deploy files list them). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

/** JWT validation, on when AUTH_JWKS_URL is set; the other AUTH_ settings go with it. */
function jwtConfig(e: z.output<typeof envSchema>) {
  if (!e.AUTH_JWKS_URL) {
    const stray = (["AUTH_ISSUER", "AUTH_AUDIENCE", "AUTH_COLLECTIONS_CLAIM"] as const).find((name) => e[name] !== undefined);
    if (stray) throw new ConfigError(`${stray} is read only with AUTH_JWKS_URL (JWT validation): set AUTH_JWKS_URL too, or unset ${stray}`);
    return null;
  }
  // Without both, a token the identity provider issued for another application would pass.
  if (!e.AUTH_ISSUER || !e.AUTH_AUDIENCE)
    throw new ConfigError("AUTH_JWKS_URL needs AUTH_ISSUER and AUTH_AUDIENCE: the issuer and the audience every token must name");
  return { jwksUrl: e.AUTH_JWKS_URL, issuer: e.AUTH_ISSUER, audience: e.AUTH_AUDIENCE, collectionsClaim: e.AUTH_COLLECTIONS_CLAIM ?? null };
}

const lanceThreadsSchema = envSchema.pick({ LANCE_CPU_THREADS: true, LANCE_IO_CORE_RESERVATION: true, TOKIO_WORKER_THREADS: true });

/** LanceDB's thread variables, as the environment sets them. */
export type LanceThreadVariables = z.output<typeof lanceThreadsSchema>;

/**
 * LanceDB reads its thread variables from the process's environment itself, once, so they are
 * set there before it loads (index/lancedb-env.ts does, first thing): `choose` gets those set
 * now and returns those to add (index/lancedb-threads.ts decides which).
 */
export function setLanceThreads(choose: (set: LanceThreadVariables) => LanceThreadVariables, env: Env = process.env): void {
  Object.assign(env, choose(lanceThreadsSchema.parse(env)));
}

export function loadConfig(env: Env) {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".") || "environment"}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  const e = parsed.data;
  for (const [name, ok] of Object.entries(available)) {
    const value = e[name as keyof typeof available];
    if (!(ok as readonly string[]).includes(value)) {
      throw new ConfigError(`${name}=${value} is not available in this version of docstore; supported: ${ok.join(", ")}`);
    }
  }
  if (e.EMBEDDER === "openai" && !e.OPENAI_API_KEY && !e.OPENAI_BASE_URL) {
    throw new ConfigError("EMBEDDER=openai needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible server)");
  }
  if (e.CATALOG === "redis" && e.QUEUE === "local") {
    throw new ConfigError("CATALOG=redis goes with QUEUE=bullmq; the embedded queue is the SQLite catalog itself");
  }
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError(
      `HTTP_HEADERS_TIMEOUT_MS (${e.HTTP_HEADERS_TIMEOUT_MS}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${e.HTTP_REQUEST_TIMEOUT_MS})`,
    );
  }
  if (e.CHUNK_OVERLAP_TOKENS >= e.CHUNK_TOKENS) {
    throw new ConfigError(`CHUNK_OVERLAP_TOKENS (${e.CHUNK_OVERLAP_TOKENS}) must be smaller than CHUNK_TOKENS (${e.CHUNK_TOKENS})`);
  }
  const dataDir = path.resolve(e.DATA_DIR);
  return {
    dataDir,
    logLevel: e.LOG_LEVEL,
    http: {
      port: e.PORT,
      host: e.HOST,
      maxBodyBytes: e.MAX_BODY_BYTES,
      maxUploadBytes: e.MAX_UPLOAD_BYTES,
      corsOrigins: e.CORS_ORIGINS,
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
    },
    auth: { tokens: e.API_TOKENS, tokenFile: path.join(dataDir, "api-token"), jwt: jwtConfig(e) },
    rateLimit: { perMinute: e.RATE_LIMIT_PER_MIN, redisUrl: e.QUEUE === "bullmq" ? e.REDIS_URL : null, prefix: e.REDIS_PREFIX },
    queue: {
      kind: e.QUEUE,
      embeddedWorker: e.EMBEDDED_WORKER === "true",
      redisUrl: e.REDIS_URL,
      prefix: e.REDIS_PREFIX,
      concurrency: e.WORKER_CONCURRENCY,
      batchSize: Math.min(e.WORKER_BATCH_SIZE, e.WORKER_CONCURRENCY),
    },
    worker: { metricsPort: e.WORKER_METRICS_PORT, host: e.HOST },
    // A queued or processing document counts as lost once it went a whole interval (a minute
    // when the timer is off: the doctor's check) without a change and without a job.
    recovery: { intervalMs: e.RECOVERY_INTERVAL_S * 1000, lostAfterMs: (e.RECOVERY_INTERVAL_S || 60) * 1000 },
    blobStore: {
      kind: e.BLOB_STORE,
      dir: path.join(dataDir, "blobs"),
      s3: {
        endpoint: e.S3_ENDPOINT,
        region: e.S3_REGION,
        bucket: e.S3_BUCKET,
        accessKeyId: e.S3_ACCESS_KEY_ID,
        secretAccessKey: e.S3_SECRET_ACCESS_KEY,
        forcePathStyle: e.S3_FORCE_PATH_STYLE === "true",
      },
    },
    qdrant: {
      url: e.QDRANT_URL,
      apiKey: e.QDRANT_API_KEY,
      collectionName: e.QDRANT_COLLECTION,
      shards: e.QDRANT_SHARDS,
      replicationFactor: e.QDRANT_REPLICATION_FACTOR,
    },
    catalog: { kind: e.CATALOG, file: path.join(dataDir, "catalog.sqlite"), redisUrl: e.REDIS_URL, prefix: e.REDIS_PREFIX },
    index: { kind: e.INDEX, dir: path.join(dataDir, "index"), cacheBytes: e.LANCEDB_CACHE_MB * 1024 * 1024 },
    embedder: {
      kind: e.EMBEDDER,
      cacheFile: path.join(dataDir, "embeddings.sqlite"),
      apiKey: e.OPENAI_API_KEY,
      baseUrl: e.OPENAI_BASE_URL,
      model: e.EMBEDDING_MODEL,
      dimensions: e.EMBEDDING_DIMENSIONS,
      maxBatch: e.EMBEDDING_BATCH_SIZE,
      requestTimeoutMs: e.EMBEDDING_TIMEOUT_MS,
      queryTimeoutMs: e.EMBEDDING_QUERY_TIMEOUT_MS,
    },
    ingest: { chunkTokens: e.CHUNK_TOKENS, overlapTokens: e.CHUNK_OVERLAP_TOKENS, threads: e.CHUNK_THREADS },
    extraction: {
      timeoutMs: e.EXTRACT_TIMEOUT_MS,
      memoryMb: e.EXTRACT_MEMORY_MB,
      limits: { maxUncompressedBytes: e.MAX_UNCOMPRESSED_BYTES, maxEntries: e.MAX_ZIP_ENTRIES },
    },
    search: {
      maxK: e.MAX_K,
      fusion: { depth: e.HYBRID_DEPTH, lexicalWeight: e.HYBRID_LEXICAL_WEIGHT, denseWeight: e.HYBRID_DENSE_WEIGHT },
    },
    waitTimeoutMs: e.WAIT_TIMEOUT_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
  };
}

export type Config = ReturnType<typeof loadConfig>;
export type JwtConfig = NonNullable<Config["auth"]["jwt"]>;
export type RateLimitConfig = Config["rateLimit"];
