/**
 * A real Qdrant for the suites that need one, from the environment (never from the repository):
 *
 * - `QDRANT_URL`: a server someone else runs; used as it is (it cannot be stopped for outages);
 * - `QDRANT_BIN`: a Qdrant binary, started here on free loopback ports with storage in a temp
 *   directory of its own, stopped (SIGTERM, then SIGKILL) and its storage removed at `close()`;
 *   `stop()` and `start()` take it down and bring it back on the same storage and ports.
 *
 * With neither, the binary at `../shared/qdrant/qdrant` beside the checkout is used when it is
 * there (every development and CI machine has it); otherwise the suites skip and say why (shown
 * as the skipped test's title).
 * Tests share one server and keep apart by Qdrant collection names (`uniqueQdrantCollection`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, it } from "vitest";
import { freePort } from "./redis-server.ts";

export const QDRANT_SKIP = "skipped: set QDRANT_BIN or QDRANT_URL to run against a real Qdrant";
export const QDRANT_BIN_SKIP = "skipped: set QDRANT_BIN to run Qdrant outages (a server at QDRANT_URL cannot be stopped)";

/** The Qdrant binary beside the checkout, where the machines keep one (never in the repository). */
export const SHARED_QDRANT_BIN = path.resolve(import.meta.dirname, "../../../../shared/qdrant/qdrant");

/**
 * Where a real Qdrant comes from, or null when the environment names none and none is beside the
 * checkout. A relative QDRANT_BIN is read from the working folder (the server starts in another);
 * one naming no file is refused here, rather than failing as a spawn error later.
 */
export function qdrantSource(
  env: NodeJS.ProcessEnv = process.env,
  sharedBin = SHARED_QDRANT_BIN,
): { url: string } | { bin: string } | null {
  if (env.QDRANT_URL) return { url: env.QDRANT_URL };
  if (env.QDRANT_BIN) {
    const bin = path.resolve(env.QDRANT_BIN);
    if (!existsSync(bin)) throw new Error(`QDRANT_BIN: no file at ${bin}`);
    return { bin };
  }
  return existsSync(sharedBin) ? { bin: sharedBin } : null;
}

/** The suite, skipped: one skipped test titled with the reason, and the reason on the console. */
export function describeSkipped(suite: string, reason: string): void {
  console.log(`${suite}: ${reason}`);
  describe(suite, () => {
    it.skip(reason, () => {});
  });
}

/**
 * Tests on a real Qdrant (the one QDRANT_URL names, or one started from QDRANT_BIN): `tests`
 * declares them, reaching the server through `server()`, started before them and closed after
 * them. With neither variable set, one skipped test titled `suite` says why.
 */
export function onRealQdrant(suite: string, tests: (server: () => QdrantTestServer) => void): void {
  if (qdrantSource() === null) {
    describeSkipped(suite, QDRANT_SKIP);
    return;
  }
  let server: QdrantTestServer | null = null;
  beforeAll(async () => {
    server = await QdrantTestServer.fromEnv();
  });
  afterAll(async () => {
    await server?.close();
  });
  tests(() => {
    if (!server) throw new Error("no Qdrant: the server did not start");
    return server;
  });
}

/** A Qdrant collection name no other test uses. */
export function uniqueQdrantCollection(prefix = "test"): string {
  return `${prefix}_${randomUUID().replaceAll("-", "")}`;
}

/** Deletes a Qdrant collection a test made (on a shared QDRANT_URL server, nothing is left behind). */
export async function deleteQdrantCollection(url: string, name: string): Promise<void> {
  const res = await fetch(`${url}/collections/${encodeURIComponent(name)}`, { method: "DELETE" });
  if (!res.ok) throw new Error(`Qdrant at ${url}: deleting collection ${name} answered ${res.status}`);
}

const READY_MS = 30_000;
const STOP_MS = 10_000;

export class QdrantTestServer {
  #proc: ChildProcess | null = null;
  #output = "";
  readonly url: string;
  /** Whether this process runs the server (and so can stop and start it). */
  readonly managed: boolean;
  readonly #bin: string | undefined;
  readonly #dir: string | undefined;
  readonly #ports: { http: number; grpc: number } | undefined;

  private constructor(url: string, bin?: string, dir?: string, ports?: { http: number; grpc: number }) {
    this.url = url;
    this.#bin = bin;
    this.#dir = dir;
    this.#ports = ports;
    this.managed = bin !== undefined;
  }

  /** The server the environment names (see the file comment), ready to answer; null if none. */
  static async fromEnv(env: NodeJS.ProcessEnv = process.env): Promise<QdrantTestServer | null> {
    const source = qdrantSource(env);
    if (source === null) return null;
    if ("url" in source) {
      const server = new QdrantTestServer(source.url.replace(/\/+$/, ""));
      await server.#waitReady();
      return server;
    }
    const ports = { http: await freePort(), grpc: await freePort() };
    const dir = mkdtempSync(path.join(tmpdir(), "docstore-qdrant-"));
    const server = new QdrantTestServer(`http://127.0.0.1:${ports.http}`, source.bin, dir, ports);
    try {
      await server.start();
    } catch (err) {
      await server.close();
      throw err;
    }
    return server;
  }

  /** The running binary's process id (for a benchmark's memory figures); undefined when none runs here. */
  get pid(): number | undefined {
    return this.#proc?.pid;
  }

  /** The folder holding a started binary's storage; undefined for a QDRANT_URL server. */
  get dir(): string | undefined {
    return this.#dir;
  }

  /** Starts the binary (again, on the same storage and ports) and waits until it is ready. */
  async start(): Promise<void> {
    if (!this.managed) throw new Error("this Qdrant runs elsewhere (QDRANT_URL): it cannot be started here");
    if (this.#proc) return;
    const dir = this.#dir!;
    const env = {
      PATH: process.env.PATH ?? "",
      QDRANT__SERVICE__HOST: "127.0.0.1",
      QDRANT__SERVICE__HTTP_PORT: String(this.#ports!.http),
      QDRANT__SERVICE__GRPC_PORT: String(this.#ports!.grpc),
      QDRANT__STORAGE__STORAGE_PATH: path.join(dir, "storage"),
      QDRANT__STORAGE__SNAPSHOTS_PATH: path.join(dir, "snapshots"),
      QDRANT__TELEMETRY_DISABLED: "true",
      QDRANT__LOG_LEVEL: "WARN",
    };
    // Its working directory has no config/ folder, so only the built-in defaults and env apply.
    const proc = spawn(this.#bin!, [], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    this.#proc = proc;
    this.#output = "";
    const keep = (c: Buffer) => (this.#output = (this.#output + c.toString()).slice(-8000));
    proc.stdout!.on("data", keep);
    proc.stderr!.on("data", keep);
    proc.once("exit", () => {
      if (this.#proc === proc) this.#proc = null;
    });
    try {
      await this.#waitReady(proc);
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /**
   * Stops the binary, its storage kept for `start()`: SIGTERM, then SIGKILL after STOP_MS (a
   * graceful stop takes Qdrant a few seconds); `{ crash: true }` sends SIGKILL at once.
   */
  async stop({ crash = false }: { crash?: boolean } = {}): Promise<void> {
    if (!this.managed) throw new Error("this Qdrant runs elsewhere (QDRANT_URL): it cannot be stopped here");
    const proc = this.#proc;
    this.#proc = null;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill(crash ? "SIGKILL" : "SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), STOP_MS);
    await exited;
    clearTimeout(timer);
  }

  /** Stops a server started here and removes its storage; a QDRANT_URL server is left alone. */
  async close(): Promise<void> {
    if (!this.managed) return;
    await this.stop({ crash: true }); // its storage goes next: no need to wait for a graceful stop
    rmSync(this.#dir!, { recursive: true, force: true });
  }

  async #waitReady(proc?: ChildProcess): Promise<void> {
    const deadline = Date.now() + READY_MS;
    for (;;) {
      if (proc && (proc.exitCode !== null || proc.signalCode !== null)) {
        throw new Error(`qdrant exited with ${proc.exitCode ?? proc.signalCode}:\n${this.#output}`);
      }
      const ok = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`Qdrant at ${this.url} was not ready within ${READY_MS} ms:\n${this.#output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
