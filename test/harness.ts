/**
 * Starts the real service as a child process on a free port with its own DATA_DIR, and talks
 * to it over HTTP. Nothing of the service is imported: these tests see what a client sees.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import http from "node:http";

const ROOT = path.resolve(import.meta.dirname, "..");
const MAIN = path.join(ROOT, "packages/api/src/main.ts");

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

export class Service {
  readonly url: string;
  readonly token: string;
  readonly dataDir: string;
  readonly proc: ChildProcess;
  output = "";

  constructor(url: string, token: string, dataDir: string, proc: ChildProcess) {
    this.url = url;
    this.token = token;
    this.dataDir = dataDir;
    this.proc = proc;
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
    const { status, headers: got, text } =
      method === "GET" && typeof body === "string" ? await rawRequest(url, method, headers, body) : await viaFetch(url, method, headers, body);
    const res = { status, headers: got };
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  /** Stops the service the way an orchestrator does, or kills it outright. */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return this.proc.exitCode;
    const exited = new Promise<number | null>((resolve) => this.proc.once("exit", (code) => resolve(code)));
    this.proc.kill(signal);
    return exited;
  }
}

export function tempDataDir(): string {
  return mkdtempSync(path.join(tmpdir(), "docstore-test-"));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Starts `node packages/api/src/main.ts`, waits for its ready line and reads URL and token from it. */
export async function startService(opts: { dataDir?: string; env?: Record<string, string> } = {}): Promise<Service> {
  const dataDir = opts.dataDir ?? tempDataDir();
  const proc = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "warn", ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const ready = await new Promise<{ url: string; token: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /docstore ready at (\S+)(?: token (\S+))?/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1]!, token: m[2] ?? "" });
      }
    };
    proc.stdout.on("data", onData);
    proc.stderr.on("data", onData);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${output}`));
    });
  });
  const service = new Service(ready.url, ready.token || (opts.env?.API_TOKENS?.split(",")[0]?.split(":")[0] ?? ""), dataDir, proc);
  proc.stdout.on("data", (c: Buffer) => (service.output += c.toString()));
  proc.stderr.on("data", (c: Buffer) => (service.output += c.toString()));
  return service;
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
