/**
 * Starts the real service as a child process on a free port with its own DATA_DIR, and talks
 * to it over HTTP. Nothing of the service is imported: these tests see what a client sees.
 * What it starts and makes (processes, servers, folders, Redis keys) is undone when the test
 * file ends if the test did not (test/cleanup.ts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import http from "node:http";
import { afterAll, beforeAll, expect } from "vitest";
import Database from "better-sqlite3";
import {
  deleteQdrantCollection,
  deleteRedisKeys,
  freePort,
  QdrantTestServer,
  startS3Server,
  testRedisPrefix,
  uniqueQdrantCollection,
} from "@docstore/shared/testing";
import { atFileEnd } from "./cleanup.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const MAIN = path.join(ROOT, "packages/api/src/main.ts");
const WORKER = path.join(ROOT, "packages/worker/src/main.ts");

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | string[] | undefined>;
  json?: unknown;
  form?: FormData;
  body?: string;
  contentType?: string;
  token?: string | null;
}

export type Mode = "embedded" | "distributed";

export class Service {
  readonly url: string;
  readonly token: string;
  readonly dataDir: string;
  readonly proc: ChildProcess;
  /** The environment the API got; workers start with the same. */
  readonly env: Record<string, string>;
  readonly workers: ChildProcess[] = [];
  /** Stopped last, in reverse order (e.g. the S3 server). */
  readonly resources: (() => Promise<void>)[] = [];
  output = "";

  constructor(url: string, token: string, dataDir: string, proc: ChildProcess, env: Record<string, string>) {
    this.url = url;
    this.token = token;
    this.dataDir = dataDir;
    this.proc = proc;
    this.env = env;
  }

  /** Each worker's metrics URL, in the order started. */
  readonly workerMetrics: string[] = [];

  /** Starts one more worker process (distributed mode) and waits until it is consuming. */
  async startWorker(): Promise<ChildProcess> {
    const port = await freePort();
    const { proc, output } = await spawnReady(WORKER, { ...this.env, WORKER_METRICS_PORT: String(port) }, /docstore worker ready/);
    this.workerMetrics.push(`http://127.0.0.1:${port}/metrics`);
    this.output += output;
    proc.stdout!.on("data", (c: Buffer) => (this.output += c.toString()));
    proc.stderr!.on("data", (c: Buffer) => (this.output += c.toString()));
    this.workers.push(proc);
    return proc;
  }

  async request(method: string, route: string, opts: RequestOptions = {}): Promise<Reply> {
    const url = new URL(route, this.url);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v === undefined) continue;
      for (const item of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(item));
    }
    const headers: Record<string, string> = {};
    const token = opts.token === undefined ? this.token : opts.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: RequestInit["body"];
    if (opts.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(opts.json);
    } else if (opts.form) {
      body = opts.form;
    } else if (opts.body !== undefined) {
      body = opts.body;
      headers["content-type"] = opts.contentType ?? "text/plain";
    }
    // fetch refuses a body on GET; Python's requests sends one, so the tests must too.
    const {
      status,
      headers: got,
      text,
    } = method === "GET" && typeof body === "string"
      ? await rawRequest(url, method, headers, body)
      : await viaFetch(url, method, headers, body);
    const res = { status, headers: got };
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  /**
   * Stops workers, then the API, the way an orchestrator does, then what was started for it;
   * returns the API's exit code. Stopping again does nothing more.
   */
  async stop(): Promise<number | null> {
    await Promise.all(this.workers.map((w) => signal(w, "SIGTERM")));
    const code = await signal(this.proc, "SIGTERM");
    for (let stop = this.resources.pop(); stop; stop = this.resources.pop()) await stop();
    return code;
  }

  /** Kills the API process outright, as a crash would. */
  async kill(): Promise<void> {
    await signal(this.proc, "SIGKILL");
  }
}

function signal(proc: ChildProcess, sig: NodeJS.Signals): Promise<number | null> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(proc.exitCode);
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  proc.kill(sig);
  return exited;
}

/** A fresh folder, removed when the test file ends (tests that remove it earlier may). */
export function tempDataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "docstore-test-"));
  atFileEnd(() => removeDir(dir));
  return dir;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Children still running when this process exits are killed with it (a bench stopped by ^C leaves none behind). */
const children = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

async function spawnReady(script: string, env: Record<string, string>, ready: RegExp) {
  // BENCH_NODE_ARGS: Node options for the service's processes, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const proc = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? []), script], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(proc);
  proc.once("exit", () => children.delete(proc));
  let output = "";
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    // Generous: on a busy 2-core machine, loading the native modules alone can take 20 s.
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`${path.basename(script)} did not start:\n${output}`));
    }, 45_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = ready.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    proc.stdout.on("data", onData);
    proc.stderr.on("data", onData);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${path.basename(script)} exited with ${code}:\n${output}`));
    });
  });
  proc.stdout.removeAllListeners("data");
  proc.stderr.removeAllListeners("data");
  proc.removeAllListeners("exit");
  return { proc, match, output };
}

export interface StartOptions {
  dataDir?: string;
  env?: Record<string, string>;
  /** distributed: BullMQ on the machine's Redis (a queue prefix of its own), S3 on a server started here, worker processes. */
  mode?: Mode;
  workers?: number;
  /**
   * qdrant: the index on a real Qdrant (INDEX=qdrant) in a Qdrant collection of this service's
   * own: `qdrant` when given (a test that stops it for an outage), else one from the
   * environment (QDRANT_URL or QDRANT_BIN), started for this service and stopped with it.
   */
  index?: "lancedb" | "qdrant";
  qdrant?: { url: string };
}

/** Starts `node packages/api/src/main.ts` (and in distributed mode its dependencies and workers). */
export async function startService(opts: StartOptions = {}): Promise<Service> {
  const dataDir = opts.dataDir ?? tempDataDir();
  const resources: (() => Promise<void>)[] = [];
  const undo = async () => {
    for (let stop = resources.pop(); stop; stop = resources.pop()) await stop();
  };
  try {
    return await start(opts, dataDir, resources);
  } catch (err) {
    await undo();
    throw err;
  }
}

async function start(opts: StartOptions, dataDir: string, resources: (() => Promise<void>)[]): Promise<Service> {
  let modeEnv: Record<string, string> = {};
  if (opts.mode === "distributed") {
    const s3 = await startS3Server();
    resources.push(() => s3.stop());
    const prefix = testRedisPrefix();
    const redisUrl = opts.env?.REDIS_URL ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
    // After the processes stop: the queue's and the catalog's keys (none if that Redis is gone).
    resources.push(async () => void (await deleteRedisKeys(redisUrl, `${prefix}:*`)));
    modeEnv = {
      QUEUE: "bullmq",
      REDIS_PREFIX: prefix,
      REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      BLOB_STORE: "s3",
      S3_ENDPOINT: s3.config.endpoint!,
      S3_REGION: s3.config.region,
      S3_BUCKET: s3.config.bucket!,
      S3_ACCESS_KEY_ID: s3.config.accessKeyId!,
      S3_SECRET_ACCESS_KEY: s3.config.secretAccessKey!,
      S3_FORCE_PATH_STYLE: "true",
    };
  }
  if (opts.index === "qdrant") {
    let qdrant = opts.qdrant;
    if (!qdrant) {
      const server = await QdrantTestServer.fromEnv();
      if (!server) throw new Error("index qdrant: set QDRANT_BIN or QDRANT_URL");
      resources.push(() => server.close());
      qdrant = server;
    }
    const { url } = qdrant;
    const collection = uniqueQdrantCollection("docstore");
    // Best effort: a test that ends with its Qdrant down still stops the rest.
    resources.push(() => deleteQdrantCollection(url, collection).catch(() => {}));
    modeEnv = { ...modeEnv, INDEX: "qdrant", QDRANT_URL: url, QDRANT_COLLECTION: collection };
  }
  // The run's temporary folder (test/global-setup.ts), for what the service's libraries put there.
  // glibc's malloc settings as scripts/run.sh and the image set them, so tests and benches run the service as users do.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    TMPDIR: tmpdir(),
    PORT: "0",
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    MALLOC_ARENA_MAX: "2",
    MALLOC_MMAP_THRESHOLD_: "4194304",
    ...modeEnv,
    ...opts.env,
  };
  const { proc, match, output } = await spawnReady(MAIN, env, /docstore ready at (\S+)(?: token (\S+))?/);
  const token = match[2] ?? env.API_TOKENS?.split(",")[0]?.split(":")[0] ?? "";
  const service = new Service(match[1]!, token, dataDir, proc, env);
  service.output = output;
  service.resources.push(...resources.splice(0));
  atFileEnd(async () => void (await service.stop()));
  proc.stdout!.on("data", (c: Buffer) => (service.output += c.toString()));
  proc.stderr!.on("data", (c: Buffer) => (service.output += c.toString()));
  for (let i = 0; i < (opts.workers ?? (opts.mode === "distributed" ? 2 : 0)); i++) await service.startWorker();
  return service;
}

/**
 * A service for the tests of the enclosing block (the file, at its top level): started before
 * them and given to `started`; after them stopped, its exit code expected to be 0, and its data
 * folder removed.
 */
export function serviceAround(opts: StartOptions, started: (svc: Service) => void): void {
  let svc: Service | undefined;
  beforeAll(async () => {
    svc = await startService(opts);
    started(svc);
  }, 60_000);
  afterAll(async () => {
    if (!svc) return;
    expect(await svc.stop()).toBe(0);
    removeDir(svc.dataDir);
  });
}

/** Collection names unique to one test, so tests never share state. */
export function uniqueName(prefix = "t"): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export async function until<T>(probe: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface CollectionCounts {
  documents: number;
  ready: number;
  pending: number;
  failed: number;
}

/** A collection's counts as `/get_list_of_collection` gives them, or undefined before it exists. */
export async function collectionCounts(svc: Service, collection: string): Promise<CollectionCounts | undefined> {
  const r = await svc.request("GET", "/get_list_of_collection");
  return r.body.collections.find((c: { name: string }) => c.name === collection);
}

/** Waits until `documents` documents of the collection are settled (ready or failed); their counts. */
export function allSettled(svc: Service, collection: string, documents: number, timeoutMs: number): Promise<CollectionCounts> {
  return until(async () => {
    const s = await collectionCounts(svc, collection);
    return s && s.ready + s.failed === documents ? s : undefined;
  }, timeoutMs);
}

/** The catalog's rows for a collection's documents, read from the service's catalog.sqlite. */
export function catalogDocuments(svc: Service, collection: string): { doc_id: string; status: string; chunks: number }[] {
  const catalog = new Database(path.join(svc.dataDir, "catalog.sqlite"), { readonly: true });
  try {
    return catalog.prepare("SELECT doc_id, status, chunks FROM documents WHERE collection = ?").all(collection) as ReturnType<
      typeof catalogDocuments
    >;
  } finally {
    catalog.close();
  }
}

async function viaFetch(url: URL, method: string, headers: Record<string, string>, body: RequestInit["body"]) {
  const res = await fetch(url, { method, headers, body });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function rawRequest(url: URL, method: string, headers: Record<string, string>, body: string) {
  return new Promise<{ status: number; headers: Headers; text: string }>((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") h.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: h, text });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}
