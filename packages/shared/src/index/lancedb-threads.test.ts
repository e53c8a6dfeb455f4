import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { setLanceThreads } from "../config.ts";
import { lanceComputeThreads } from "./lancedb-threads.ts";

describe("lanceComputeThreads", () => {
  it("gives LanceDB every core, and its runtime two workers a core, where its own rule would leave it one; leaves a setting alone", () => {
    expect(lanceComputeThreads({}, 2)).toEqual({ LANCE_CPU_THREADS: "2", TOKIO_WORKER_THREADS: "4" });
    expect(lanceComputeThreads({}, 3)).toEqual({ LANCE_CPU_THREADS: "3", TOKIO_WORKER_THREADS: "6" });
    expect(lanceComputeThreads({}, 1)).toEqual({});
    expect(lanceComputeThreads({}, 4)).toEqual({}); // LanceDB's own: 2 of 4
    expect(lanceComputeThreads({ LANCE_CPU_THREADS: "1" }, 2)).toEqual({});
    expect(lanceComputeThreads({ LANCE_IO_CORE_RESERVATION: "0" }, 2)).toEqual({});
    expect(lanceComputeThreads({ TOKIO_WORKER_THREADS: "3" }, 2)).toEqual({ LANCE_CPU_THREADS: "2" });
  });

  it("is applied to the environment by setLanceThreads, which adds what it picks and changes nothing set", () => {
    const env: Record<string, string | undefined> = { TOKIO_WORKER_THREADS: "3", PATH: "/bin" };
    setLanceThreads((set) => lanceComputeThreads(set, 2), env);
    expect(env).toEqual({ TOKIO_WORKER_THREADS: "3", PATH: "/bin", LANCE_CPU_THREADS: "2" });
    const own: Record<string, string | undefined> = { LANCE_IO_CORE_RESERVATION: "2" };
    setLanceThreads((set) => lanceComputeThreads(set, 2), own);
    expect(own).toEqual({ LANCE_IO_CORE_RESERVATION: "2" });
  });

  describe("in a process that loads the shared package", () => {
    const dirs: string[] = [];
    afterEach(() => {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    });

    // A child process each: LanceDB reads the variables once per process. It loads the shared
    // package as the service does, then LanceDB, and counts the async runtime's threads; then it
    // builds a full-text index (the compute pool starts its threads as work needs them) and
    // counts the compute pool's.
    const threads = async (env: NodeJS.ProcessEnv) => {
      const dir = mkdtempSync(path.join(tmpdir(), "docstore-threads-"));
      dirs.push(dir);
      const shared = new URL("../index.ts", import.meta.url).href;
      const script = `
        import { readdirSync, readFileSync } from "node:fs";
        const named = (name) => readdirSync("/proc/self/task").filter((t) => readFileSync("/proc/self/task/" + t + "/comm", "utf8").trim() === name).length;
        await import(${JSON.stringify(shared)});
        const { connect, Index } = await import("@lancedb/lancedb");
        const runtime = named("tokio-rt-worker");
        const db = await connect(${JSON.stringify(dir)});
        const probe = await db.createTable("probe", Array.from({ length: 20000 }, (_, i) => ({ text: "word" + (i % 997) + " other" + i })));
        await probe.createIndex("text", { config: Index.fts() });
        console.log(JSON.stringify({ runtime, compute: named("lance-cpu") }));`;
      const { LANCE_CPU_THREADS: _, LANCE_IO_CORE_RESERVATION: __, TOKIO_WORKER_THREADS: ___, ...rest } = process.env;
      const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { env: { ...rest, ...env } });
      return JSON.parse(stdout.trim()) as { runtime: number; compute: number };
    };

    it.skipIf(!existsSync("/proc/self/task") || availableParallelism() < 2 || availableParallelism() > 3)(
      "runs more compute threads, and more runtime workers, than with LANCE_CPU_THREADS=1 on a machine of 2 or 3 cores",
      async () => {
        const [chosen, one] = await Promise.all([threads({}), threads({ LANCE_CPU_THREADS: "1" })]);
        expect(one.compute).toBeGreaterThan(0);
        expect(chosen.compute).toBeGreaterThan(one.compute);
        expect(one.runtime).toBe(availableParallelism());
        expect(chosen.runtime).toBe(2 * availableParallelism());
      },
      60_000,
    );
  });
});
