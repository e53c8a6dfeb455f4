import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { lanceComputeThreads } from "./lancedb-threads.ts";

describe("lanceComputeThreads", () => {
  it("gives LanceDB every core where its own rule would leave it one, and leaves a setting alone", () => {
    const on = (env: NodeJS.ProcessEnv, cores: number) => {
      lanceComputeThreads(env, cores);
      return env.LANCE_CPU_THREADS;
    };
    expect(on({}, 2)).toBe("2");
    expect(on({}, 3)).toBe("3");
    expect(on({}, 1)).toBeUndefined();
    expect(on({}, 4)).toBeUndefined(); // LanceDB's own: 2 of 4
    expect(on({ LANCE_CPU_THREADS: "1" }, 2)).toBe("1");
    expect(on({ LANCE_IO_CORE_RESERVATION: "0" }, 2)).toBeUndefined();
  });

  describe("in a process that opens the chunk table", () => {
    const dirs: string[] = [];
    afterEach(() => {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    });

    // A child process each: LanceDB reads the variable once per process. It opens the chunk table
    // as the service does, then builds a full-text index on a table of its own (the pool starts
    // its threads as work needs them), and counts the threads of LanceDB's compute pool.
    const computeThreads = async (env: NodeJS.ProcessEnv) => {
      const dir = mkdtempSync(path.join(tmpdir(), "docstore-threads-"));
      dirs.push(dir);
      const table = new URL("./lancedb-table.ts", import.meta.url).href;
      const script = `
        import { readdirSync, readFileSync } from "node:fs";
        const { openChunkTable } = await import(${JSON.stringify(table)});
        const { db } = await openChunkTable(${JSON.stringify(dir)}, null, 64 * 1024 * 1024);
        const probe = await db.createTable("probe", Array.from({ length: 20000 }, (_, i) => ({ text: "word" + (i % 997) + " other" + i })));
        const { Index } = await import("@lancedb/lancedb");
        await probe.createIndex("text", { config: Index.fts() });
        const names = readdirSync("/proc/self/task").map((t) => readFileSync("/proc/self/task/" + t + "/comm", "utf8").trim());
        console.log(names.filter((n) => n === "lance-cpu").length);`;
      const { LANCE_CPU_THREADS: _, LANCE_IO_CORE_RESERVATION: __, ...rest } = process.env;
      const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { env: { ...rest, ...env } });
      return Number(stdout.trim());
    };

    it.skipIf(!existsSync("/proc/self/task") || availableParallelism() < 2 || availableParallelism() > 3)(
      "runs more compute threads than with LANCE_CPU_THREADS=1 on a machine of 2 or 3 cores",
      async () => {
        const [chosen, one] = await Promise.all([computeThreads({}), computeThreads({ LANCE_CPU_THREADS: "1" })]);
        expect(one).toBeGreaterThan(0);
        expect(chosen).toBeGreaterThan(one);
      },
      60_000,
    );
  });
});
