import type { LanceThreadVariables } from "../config.ts";

/**
 * LanceDB runs its compute-heavy work (compaction, building the full-text index) on a pool of
 * `LANCE_CPU_THREADS` threads, by default the cores less `LANCE_IO_CORE_RESERVATION` (2): one
 * thread on a machine of two or three cores, where a maintenance run after a load then left a
 * core idle. There it gets every core, and its async runtime twice as many worker threads
 * (`TOKIO_WORKER_THREADS`, by default one a core). Every core for compute with one worker a core
 * made the appends and reads beside a run wait; twice the workers, or the full-text index built
 * in one shard (`LANCE_FTS_NUM_SHARDS=1`), kept them short (figures: docs/benchmarks.md, "LanceDB's
 * threads").
 * Setting `LANCE_CPU_THREADS` or `LANCE_IO_CORE_RESERVATION` keeps LanceDB's own choice;
 * `TOKIO_WORKER_THREADS`, when set, is kept too.
 *
 * Returns the variables to add to those `set`, on a machine of `cores` cores. LanceDB reads them
 * from the process's environment once: `TOKIO_WORKER_THREADS` as its module loads,
 * `LANCE_CPU_THREADS` when it first compacts or builds an index. So they are set in the main
 * thread (a worker thread's `process.env` is its own copy) before anything imports LanceDB:
 * see lancedb-env.ts.
 */
export function lanceComputeThreads(set: LanceThreadVariables, cores: number): LanceThreadVariables {
  if (set.LANCE_CPU_THREADS !== undefined || set.LANCE_IO_CORE_RESERVATION !== undefined) return {};
  if (cores <= 1 || cores > 3) return {};
  const add: LanceThreadVariables = { LANCE_CPU_THREADS: String(cores) };
  if (set.TOKIO_WORKER_THREADS === undefined) add.TOKIO_WORKER_THREADS = String(2 * cores);
  return add;
}
