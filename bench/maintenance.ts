/**
 * `pnpm bench:maintenance`: what one maintenance run (`optimize()`) does to the writes and reads
 * made beside it, for each way of sizing LanceDB's threads. A table of `N` rows of about 1 KB
 * with a full-text index gets `TAIL` more in fragments of 1,000 rows (as a load leaves them);
 * then `optimize()` compacts them and folds them into the index while one client appends 500
 * rows at a time and two read 10 rows by a filter, each call timed. Each setting runs in a
 * process of its own (LanceDB reads its thread counts once a process), `ROUNDS` times in turns:
 *   LanceDB's own    LANCE_CPU_THREADS and TOKIO_WORKER_THREADS unset (LanceDB's defaults)
 *   a worker a core  LANCE_CPU_THREADS = the cores, TOKIO_WORKER_THREADS = the cores
 *   the service's    what lanceComputeThreads (packages/shared/src/index/lancedb-threads.ts) sets
 * Prints figures; asserts nothing.
 *   N=100000  TAIL=60000  ROUNDS=2
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { fmt, scifact } from "./parts/lib.ts";
import { scaleBatches, sentencesOf, type ScaleDoc } from "./parts/scale-corpus.ts";

const n = Number(process.env.N ?? 100_000);
const tail = Number(process.env.TAIL ?? 60_000);
const rounds = Number(process.env.ROUNDS ?? 2);
for (const [name, value] of [
  ["N", n],
  ["TAIL", tail],
  ["ROUNDS", rounds],
] as const) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}: a positive integer, not ${value}`);
}

if (process.argv[2] === "--one") await one(process.argv[3] === "service");
else await compare();

async function compare() {
  const cores = availableParallelism();
  const { LANCE_CPU_THREADS: _, LANCE_IO_CORE_RESERVATION: __, TOKIO_WORKER_THREADS: ___, ...env } = process.env;
  // LanceDB's own: its rule left alone (LANCE_IO_CORE_RESERVATION at its default keeps ours out).
  const settings: [string, NodeJS.ProcessEnv, boolean][] = [
    ["LanceDB's own", { ...env, LANCE_IO_CORE_RESERVATION: "2" }, false],
    ["a worker a core", { ...env, LANCE_CPU_THREADS: String(cores), TOKIO_WORKER_THREADS: String(cores) }, false],
    ["the service's", env, true],
  ];
  console.log(
    `bare LanceDB, ${cores} cores: ${fmt(n)} rows with a full-text index, ${fmt(tail)} more in fragments of 1,000, then optimize() beside one client appending 500 rows a call and two reading 10 rows by a filter`,
  );
  for (let round = 1; round <= rounds; round++) {
    for (const [label, childEnv, service] of settings) {
      const args = [import.meta.filename, "--one", service ? "service" : "plain"];
      const { stdout } = await promisify(execFile)(process.execPath, args, { env: childEnv, maxBuffer: 1 << 20 });
      console.log(`  round ${round}, ${label.padEnd(14)} ${stdout.trim()}`);
    }
  }
}

async function one(asTheService: boolean) {
  // Loaded here, after the setting: LanceDB's runtime takes TOKIO_WORKER_THREADS as it loads.
  if (asTheService) await import("@docstore/shared/index/lancedb-env");
  const lancedb = await import("@lancedb/lancedb");
  const dir = mkdtempSync(path.join(tmpdir(), "bench-maintenance-"));
  try {
    // As many rows as asked for: the table's, then the appends beside the run.
    const docs = scaleBatches(sentencesOf(scifact().corpus), Number.MAX_SAFE_INTEGER, 500);
    const next = () => (docs.next().value as ScaleDoc[]).map((d) => ({ id: d.id, status: d.status, text: d.text }));
    const thousand = () => [...next(), ...next()];
    const db = await lancedb.connect(dir);
    const table = await db.createTable("docs", thousand());
    for (let rows = 1_000; rows < n; rows += 1_000) await table.add(thousand());
    await table.createIndex("text", {
      config: lancedb.Index.fts({ language: "English", stem: true, removeStopWords: true, lowercase: true }),
    });
    await table.optimize();
    for (let rows = 0; rows < tail; rows += 1_000) await table.add(thousand());
    const appends: number[] = [];
    const reads: number[] = [];
    let running = true;
    const started = performance.now();
    const run = table.optimize().then(() => {
      running = false;
      return performance.now() - started;
    });
    const timed = async (into: number[], call: () => Promise<unknown>) => {
      while (running) {
        const t = performance.now();
        await call();
        into.push(performance.now() - t);
      }
    };
    const read = () => table.query().where("status = 'open'").select(["id"]).limit(10).toArray();
    await Promise.all([timed(appends, () => table.add(next())), timed(reads, read), timed(reads, read)]);
    const ms = await run;
    const at = (list: number[], q: number) =>
      fmt([...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(q * list.length))] ?? NaN);
    const threads = `LANCE_CPU_THREADS ${process.env.LANCE_CPU_THREADS ?? "unset"}, TOKIO_WORKER_THREADS ${process.env.TOKIO_WORKER_THREADS ?? "unset"}`;
    console.log(
      `${threads}: optimize() ${fmt(ms)} ms; beside it ${fmt(appends.length)} appends (p50 ${at(appends, 0.5)}, max ${at(appends, 1)} ms), ` +
        `${fmt(reads.length)} reads (p50 ${at(reads, 0.5)}, p99 ${at(reads, 0.99)}, max ${at(reads, 1)} ms)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
