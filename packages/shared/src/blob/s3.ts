import { DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadBucketCommand } from "@aws-sdk/client-s3";
import { PutObjectCommand, S3Client, paginateListObjectsV2 } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import type { BlobStore } from "../ports.ts";
import { ConfigError } from "../errors.ts";
import { AppError, NotFoundError, UnavailableError } from "../errors.ts";
import { assertBlobKey } from "./fs.ts";

export interface S3BlobOptions {
  endpoint?: string | undefined;
  region: string;
  /** Optional in the type because `config.blobStore.s3` has it so; refused at construction if absent. */
  bucket: string | undefined;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  forcePathStyle: boolean;
  /** A ready client (tests that watch the commands sent); the options above still name the bucket. */
  client?: S3Client;
  /** Bodies of at least this many bytes go through a multipart upload (default 8 MiB). */
  multipartThreshold?: number;
  /** Multipart part size (default 8 MiB, at least 5 MiB). */
  partSize?: number;
  connectTimeoutMs?: number;
  /** Longest silence on an open connection before the attempt fails. */
  idleTimeoutMs?: number;
  maxAttempts?: number;
}

const MiB = 1024 * 1024;
/** S3 refuses smaller parts (but the last), and lib-storage refuses to try. */
const MIN_PART = 5 * MiB;
/** DeleteObjects takes at most 1000 keys, which is also ListObjectsV2's largest page. */
const BATCH = 1000;
/** Connections the client keeps to the endpoint, and requests sent at once. */
const CONNECTIONS = 50;
/** Parts of a multipart upload sent at once. */
const PARTS_AT_ONCE = 4;

/**
 * At most `size` requests at once (a multipart upload counts as its parts), the others waiting
 * in turn. The SDK's connection timeout starts when a request is made, not when it gets one
 * of the pool's connections: a burst of more requests than connections (a bulk load's blobs)
 * would see those waiting for a connection time out, and answer 503, with the store well.
 */
class Slots {
  #free: number;
  readonly #waiting: { n: number; go: () => void }[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  async run<T>(n: number, work: () => Promise<T>): Promise<T> {
    if (this.#waiting.length > 0 || this.#free < n) await new Promise<void>((go) => this.#waiting.push({ n, go }));
    else this.#free -= n;
    try {
      return await work();
    } finally {
      this.#free += n;
      for (let next = this.#waiting[0]; next && next.n <= this.#free; next = this.#waiting[0]) {
        this.#waiting.shift();
        this.#free -= next.n;
        next.go();
      }
    }
  }
}

/**
 * Blobs as objects in one S3 bucket (AWS S3, MinIO, R2...). PutObject and CompleteMultipartUpload
 * are atomic, so a failed put never leaves a readable half-object (a failed multipart upload is
 * aborted, and a bucket lifecycle rule should clear parts left when even the abort failed).
 * The client keeps no broken state across an outage: each request opens or reuses a connection
 * as it finds them, so when the endpoint is back the same instance works again.
 */
export class S3BlobStore implements BlobStore {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #threshold: number;
  readonly #partSize: number;
  readonly #ownsClient: boolean;
  readonly #slots = new Slots(CONNECTIONS);

  constructor(options: S3BlobOptions) {
    if (!options.bucket) throw new ConfigError("S3_BUCKET is required when BLOB_STORE=s3");
    if (!options.accessKeyId !== !options.secretAccessKey) {
      throw new ConfigError("S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together (or neither, for the SDK's default credentials)");
    }
    this.#bucket = options.bucket;
    this.#partSize = Math.max(options.partSize ?? 8 * MiB, MIN_PART);
    this.#threshold = options.multipartThreshold ?? 8 * MiB;
    this.#ownsClient = !options.client;
    this.#client =
      options.client ??
      new S3Client({
        endpoint: options.endpoint,
        region: options.region,
        forcePathStyle: options.forcePathStyle,
        credentials:
          options.accessKeyId && options.secretAccessKey
            ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
            : undefined,
        // The SDK's defaults wait without bound on a dead endpoint; a load should get its 503
        // in seconds (about 4 s unreachable, 10 s for a server that accepts but never answers,
        // once it has a connection: behind more than CONNECTIONS requests, it waits its turn).
        // A second attempt still absorbs a keep-alive socket gone stale during a restart.
        maxAttempts: options.maxAttempts ?? 2,
        // A request waits for a free connection before these start (see Slots).
        requestHandler: {
          connectionTimeout: options.connectTimeoutMs ?? 2_000,
          socketTimeout: options.idleTimeoutMs ?? 5_000,
          httpAgent: { keepAlive: true, maxSockets: CONNECTIONS },
        },
        // Newer SDKs add CRC32 trailers by default, which several S3-compatible servers refuse.
        requestChecksumCalculation: "WHEN_REQUIRED",
        responseChecksumValidation: "WHEN_REQUIRED",
      });
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    assertBlobKey(key);
    const params = { Bucket: this.#bucket, Key: key, Body: data, ContentType: "application/octet-stream" };
    if (data.byteLength < this.#threshold) {
      await this.#call("put", key, () => this.#client.send(new PutObjectCommand({ ...params, ContentLength: data.byteLength })));
      return;
    }
    // Parts go up a few at a time as they are cut, rather than one request of the whole body.
    await this.#call(
      "put",
      key,
      () => new Upload({ client: this.#client, params, partSize: this.#partSize, queueSize: PARTS_AT_ONCE }).done(),
      PARTS_AT_ONCE,
    );
  }

  async get(key: string): Promise<Uint8Array> {
    assertBlobKey(key);
    return this.#call("get", key, async () => {
      const out = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: key }));
      if (!out.Body) throw new Error("GetObject answered without a body");
      return out.Body.transformToByteArray();
    });
  }

  async delete(key: string): Promise<void> {
    assertBlobKey(key);
    await this.#call("delete", key, () => this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key })));
  }

  async deletePrefix(prefix: string): Promise<void> {
    const dir = folder(prefix);
    await this.#call("delete prefix", dir, async () => {
      for await (const keys of this.#pages(dir)) {
        const objects = keys.map((Key) => ({ Key }));
        const out = await this.#client.send(new DeleteObjectsCommand({ Bucket: this.#bucket, Delete: { Objects: objects, Quiet: true } }));
        // DeleteObjects answers 200 even when some keys failed; those are listed here.
        const failed = out.Errors ?? [];
        if (failed.length > 0) {
          const first = failed[0];
          const cause = new Error(`${first?.Code}: ${first?.Message} (${first?.Key})`);
          throw new UnavailableError(
            `blob store unavailable: ${failed.length} of ${objects.length} objects under ${dir} not deleted`,
            cause,
          );
        }
      }
    });
  }

  async *list(prefix: string): AsyncIterable<string> {
    const dir = folder(prefix);
    const pages = this.#pages(dir);
    for (;;) {
      const page = await this.#call("list", dir, () => pages.next());
      if (page.done) return;
      yield* page.value;
    }
  }

  async ping(): Promise<void> {
    try {
      await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }));
    } catch (err) {
      // Even "no such bucket" means the store cannot serve: readiness fails, it is not a 404.
      throw new UnavailableError(`blob store unavailable: bucket ${this.#bucket}: ${describe(err)}`, err);
    }
  }

  /** Closes the pooled connections (at shutdown) of a client it built itself. */
  async close(): Promise<void> {
    if (this.#ownsClient) this.#client.destroy();
  }

  /**
   * The keys under `dir`, a page at a time. A continuation token stands for the last key
   * returned, so deleting a page before asking for the next does not make the listing skip keys.
   */
  async *#pages(dir: string): AsyncGenerator<string[], void> {
    const pages = paginateListObjectsV2({ client: this.#client, pageSize: BATCH }, { Bucket: this.#bucket, Prefix: dir });
    for await (const page of pages) {
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [o.Key] : []));
      if (keys.length > 0) yield keys;
    }
  }

  /** Runs `run` in `slots` of the client's connections; its errors normalised. */
  async #call<T>(op: string, target: string, run: () => Promise<T>, slots = 1): Promise<T> {
    try {
      return await this.#slots.run(slots, run);
    } catch (err) {
      throw normalise(err, op, target);
    }
  }
}

/** `c1` or `c1/` lists `c1/...` only, never `c10/...` (the same reading as FsBlobStore). */
function folder(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, "");
  assertBlobKey(trimmed);
  return `${trimmed}/`;
}

type SdkError = Error & { code?: string; $metadata?: { httpStatusCode?: number } };

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EHOSTDOWN",
]);
/**
 * Timeouts and throttling, and a store that answers but cannot serve us as configured (bucket,
 * credentials, region): to the API's clients alike, a dependency that is down.
 */
const UNAVAILABLE_NAMES = new Set([
  "TimeoutError",
  "RequestTimeout",
  "RequestTimeoutException",
  "SlowDown",
  "Throttling",
  "ThrottlingException",
  "RequestThrottled",
  "TooManyRequestsException",
  "ServiceUnavailable",
  "InternalError",
  "NoSuchBucket",
  "AccessDenied",
  "InvalidAccessKeyId",
  "SignatureDoesNotMatch",
  "AuthorizationHeaderMalformed",
  "PermanentRedirect",
  "InvalidBucketName",
]);
const UNAVAILABLE_STATUS = new Set([301, 403, 404, 408, 429]);

function normalise(err: unknown, op: string, target: string): unknown {
  if (err instanceof AppError || !(err instanceof Error)) return err;
  const e = err as SdkError;
  const status = e.$metadata?.httpStatusCode;
  // Only S3's own answer means a missing key: a bare 404 comes from a wrong endpoint or bucket.
  if (e.name === "NoSuchKey") {
    const notFound = new NotFoundError(`blob ${target} not found`);
    notFound.cause = err;
    return notFound;
  }
  const unavailable =
    (status !== undefined && (status >= 500 || UNAVAILABLE_STATUS.has(status))) ||
    (e.code !== undefined && NETWORK_CODES.has(e.code)) ||
    UNAVAILABLE_NAMES.has(e.name);
  if (unavailable) return new UnavailableError(`blob store unavailable: ${op} ${target}: ${describe(err)}`, err);
  return new Error(`blob store: ${op} ${target} failed: ${describe(err)}`, { cause: err });
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as SdkError).code;
  // Node's AggregateError (every address refused) has an empty message but a code.
  return [err.name, code, err.message].filter(Boolean).join(": ");
}
