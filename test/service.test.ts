/**
 * Starting and stopping like a service: `bash scripts/run.sh start` is the service itself, so a
 * supervisor's signals reach it; a start that cannot work says why in one line and exits 2
 * before opening anything; one DATA_DIR never has two embedded processes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { deleteRedisKeys, freePort, portAnswers, testRedisPrefix } from "@docstore/shared/testing";
import { atFileEnd } from "./cleanup.ts";
import { startService, tempDataDir, until } from "./harness.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const API = path.join(ROOT, "packages/api/src/main.ts");
const WORKER = path.join(ROOT, "packages/worker/src/main.ts");
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

interface Running {
  proc: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns a command in a process group of its own; when the test file ends, the whole group is
 * killed if anything of it still runs (an orphan left by a wrapper would be in that group).
 */
function run(command: string, args: string[], env: Record<string, string | undefined>): Running {
  const proc = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  proc.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  proc.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once("exit", (code, signal) => resolve({ code, signal })),
  );
  atFileEnd(() => {
    try {
      process.kill(-proc.pid!, "SIGKILL");
    } catch {
      // the group is gone: nothing left running
    }
  });
  return { proc, output: () => output, exited };
}

/** A process that must refuse to start: its exit code and everything it printed. */
async function refused(script: string, env: Record<string, string>) {
  const r = run(process.execPath, [script], { PATH: process.env.PATH, TMPDIR: tmpdir(), LOG_LEVEL: "info", ...env });
  const { code } = await r.exited;
  return { code, output: r.output() };
}

async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  atFileEnd(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as { port: number }).port, server };
}

/** One line, and nothing that looks like a stack trace. */
function expectOneLine(output: string, line: string) {
  expect(output).toBe(`${line}\n`);
}

describe("bash scripts/run.sh start", () => {
  it.each(["SIGTERM", "SIGINT"] as const)(
    "is the service itself: %s stops it with exit code 0, closes its port and prints no package-manager failure",
    async (sig) => {
      const dataDir = tempDataDir();
      const port = await freePort();
      // Node.js 24 (this test's own) first in PATH, so the script provisions nothing; pnpm's
      // temporary files and compile cache in a folder removed with the others.
      const env = {
        ...process.env,
        PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`,
        TMPDIR: tempDataDir(),
        DATA_DIR: dataDir,
        PORT: String(port),
        LOG_LEVEL: "info",
      };
      const svc = run("bash", ["scripts/run.sh", "start"], env);
      await until(async () => svc.output().includes("docstore ready at") || svc.proc.exitCode !== null, 120_000);
      expect(svc.output()).toContain(`docstore ready at http://127.0.0.1:${port}`);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

      svc.proc.kill(sig);
      // Bounded: a wrapper that ignores the signal would otherwise keep the test waiting.
      await until(async () => svc.proc.exitCode !== null || svc.proc.signalCode !== null, 60_000);
      expect(await svc.exited).toEqual({ code: 0, signal: null });
      expect(await portAnswers(port)).toBe(false);
      expect(svc.output()).toContain(`"signal":"${sig}"`);
      expect(svc.output()).toContain('"msg":"stopped"');
      expect(svc.output()).not.toMatch(/ELIFECYCLE|Command failed/);
      // The lock on DATA_DIR went with the process: a new one starts there.
      const again = await startService({ dataDir });
      expect(await again.stop()).toBe(0);
    },
    180_000,
  );
});

describe("a start that cannot work", () => {
  it("names PORT when the port is in use, exits 2, and opens nothing in DATA_DIR", async () => {
    const { port } = await holdPort();
    const dataDir = tempDataDir();
    const r = await refused(API, { PORT: String(port), DATA_DIR: dataDir });
    expect(r.code).toBe(2);
    expectOneLine(r.output, `docstore: PORT=${port}: already in use on 127.0.0.1; stop what listens there or choose another PORT`);
    // Only the lock taken first: no catalog, no index, no token.
    expect(readdirSync(dataDir)).toEqual(["docstore.lock"]);
  });

  it("names HOST when it is not an address of this machine, and exits 2", async () => {
    // A documentation address (RFC 5737): binding to it fails here, and nothing is sent.
    const r = await refused(API, { PORT: "0", HOST: "192.0.2.1", DATA_DIR: tempDataDir() });
    expect(r.code).toBe(2);
    expectOneLine(
      r.output,
      "docstore: HOST=192.0.2.1: not an address of this machine (EADDRNOTAVAIL); use 127.0.0.1, 0.0.0.0 or one of its interfaces' addresses",
    );
  });

  it("names DATA_DIR when it is a file, exits 2, and leaves the file alone", async () => {
    const file = path.join(tempDataDir(), "not-a-folder");
    writeFileSync(file, "mine");
    const cases = [
      [API, "docstore", {}],
      [API, "docstore", { QUEUE: "bullmq" }],
      [WORKER, "docstore worker", { QUEUE: "bullmq", WORKER_METRICS_PORT: "0" }],
    ] as const;
    const results = await Promise.all(cases.map(([script, , env]) => refused(script, { PORT: "0", DATA_DIR: file, ...env })));
    results.forEach((r, i) => {
      expect(r.code).toBe(2);
      expectOneLine(r.output, `${cases[i]![1]}: DATA_DIR=${file}: is a file, not a folder`);
    });
    expect(readFileSync(file, "utf8")).toBe("mine");
  });

  it("names WORKER_METRICS_PORT when a worker's metrics port is in use, and exits 2", async () => {
    const { port } = await holdPort();
    const r = await refused(WORKER, {
      QUEUE: "bullmq",
      WORKER_METRICS_PORT: String(port),
      DATA_DIR: tempDataDir(),
      REDIS_PREFIX: testRedisPrefix(),
    });
    expect(r.code).toBe(2);
    expectOneLine(
      r.output,
      `docstore worker: WORKER_METRICS_PORT=${port}: already in use on 127.0.0.1; stop what listens there or choose another WORKER_METRICS_PORT`,
    );
  });
});

describe("one DATA_DIR, one embedded process", () => {
  it("refuses a second process on the DATA_DIR of a running one, naming its pid, and the first keeps serving", async () => {
    const first = await startService();
    const second = await refused(API, { PORT: "0", DATA_DIR: first.dataDir });
    expect(second.code).toBe(2);
    expectOneLine(
      second.output,
      `docstore: DATA_DIR=${first.dataDir}: in use by another docstore process (pid ${first.proc.pid}); one DATA_DIR serves one embedded docstore at a time`,
    );
    const worker = await refused(WORKER, {
      QUEUE: "bullmq",
      WORKER_METRICS_PORT: "0",
      DATA_DIR: first.dataDir,
      REDIS_PREFIX: testRedisPrefix(),
    });
    expect(worker.code).toBe(2);
    expectOneLine(
      worker.output,
      `docstore worker: DATA_DIR=${first.dataDir}: in use by an embedded docstore process (pid ${first.proc.pid}); the distributed mode cannot share its DATA_DIR`,
    );
    expect((await first.request("GET", "/healthz")).status).toBe(200);
    expect((await first.request("GET", "/get_list_of_collection")).status).toBe(200);
    expect(await first.stop()).toBe(0);
  });

  it("is not kept out by a process that crashed (SIGKILL): the lock went with it", async () => {
    const first = await startService();
    await first.kill();
    const second = await startService({ dataDir: first.dataDir });
    expect((await second.request("GET", "/get_list_of_collection")).status).toBe(200);
    expect(await second.stop()).toBe(0);
  });

  it("keeps an embedded process out of a DATA_DIR that distributed processes share", async () => {
    const dataDir = tempDataDir();
    const prefix = testRedisPrefix();
    atFileEnd(async () => void (await deleteRedisKeys(REDIS_URL, `${prefix}:*`)));
    const env = {
      PATH: process.env.PATH,
      TMPDIR: tmpdir(),
      DATA_DIR: dataDir,
      QUEUE: "bullmq",
      REDIS_URL,
      REDIS_PREFIX: prefix,
      WORKER_METRICS_PORT: "0",
      LOG_LEVEL: "warn",
    };
    const workers = [run(process.execPath, [WORKER], env), run(process.execPath, [WORKER], env)];
    for (const w of workers) await until(async () => w.output().includes("docstore worker ready") || w.proc.exitCode !== null);
    for (const w of workers) expect(w.output()).toContain("docstore worker ready");

    const embedded = await refused(API, { PORT: "0", DATA_DIR: dataDir });
    expect(embedded.code).toBe(2);
    expectOneLine(
      embedded.output,
      `docstore: DATA_DIR=${dataDir}: in use by docstore processes of the distributed mode (QUEUE=bullmq); an embedded docstore needs its DATA_DIR to itself`,
    );
    for (const w of workers) w.proc.kill("SIGTERM");
    for (const w of workers) expect((await w.exited).code).toBe(0);
  });
});
