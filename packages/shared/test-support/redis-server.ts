/** A throwaway redis-server of a test's own, for outages (the machine's Redis is shared), and key hygiene on the shared one. */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { connect, createServer } from "node:net";
import { Redis } from "ioredis";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

/** Whether something accepts a TCP connection on the loopback port. */
export const portAnswers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });

export interface RedisServerOptions {
  /**
   * Keep the data here, in an append-only file synced on every write: a server stopped in any
   * way (SIGKILL included) and started again with the same folder has every write it answered.
   * Without it, nothing is kept.
   */
  dataDir?: string;
}

export class RedisServer {
  #proc: ChildProcess | null = null;
  readonly port: number;
  readonly #dataDir: string | undefined;

  constructor(port: number, options: RedisServerOptions = {}) {
    this.port = port;
    this.#dataDir = options.dataDir;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (on the data of the last start, with a `dataDir`) and waits until it accepts connections. */
  async start(): Promise<void> {
    const persistence = this.#dataDir ? ["--dir", this.#dataDir, "--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"];
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", ...persistence];
    this.#proc = spawn("redis-server", args, { stdio: "ignore" });
    const deadline = Date.now() + 10_000;
    while (!(await portAnswers(this.port))) {
      if (Date.now() > deadline || this.#proc.exitCode !== null) throw new Error(`redis-server on ${this.port} did not start`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Kills the server, as a crash would (what a `dataDir` holds is kept). */
  async stop(): Promise<void> {
    const proc = this.#proc;
    this.#proc = null;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGKILL");
    await exited;
  }
}

/**
 * A prefix for a test's keys on the machine's Redis: unique, and tagged with the test run
 * (DOCSTORE_TEST_RUN, set by test/global-setup.ts), whose end checks that none is left.
 */
export function testRedisPrefix(): string {
  return `test-${process.env.DOCSTORE_TEST_RUN ?? "adhoc"}-${randomUUID().slice(0, 8)}`;
}

/**
 * Deletes the keys matching `pattern` (a SCAN pattern) and returns how many there were. A Redis
 * that does not answer (a test's own, stopped) has none to delete: 0.
 */
export async function deleteRedisKeys(url: string, pattern: string): Promise<number> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 });
  redis.on("error", () => {});
  try {
    await redis.connect();
  } catch {
    redis.disconnect();
    return 0;
  }
  let deleted = 0;
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      if (keys.length > 0) deleted += await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
  return deleted;
}
