import { availableParallelism } from "node:os";

/**
 * LanceDB runs its compute-heavy work (compaction, building the full-text index) on a pool of
 * `LANCE_CPU_THREADS` threads, by default the cores less `LANCE_IO_CORE_RESERVATION` (2): one
 * thread on a machine of two or three cores, where a maintenance run after a load then left a
 * core idle. There it gets every core. Set either variable to keep LanceDB's own choice.
 *
 * LanceDB reads the variable from the process's environment once, when it first needs the pool:
 * this must run in the main thread (a worker thread's `process.env` is its own copy) before
 * then. Measured (bench:scale, 200,000 documents, 2 cores): the first searches after a load
 * waited 7.1-7.9 s for the run that folds the load into the index, against 9.4-10.5 s.
 */
export function lanceComputeThreads(env: NodeJS.ProcessEnv = process.env, cores = availableParallelism()): void {
  if (env.LANCE_CPU_THREADS !== undefined || env.LANCE_IO_CORE_RESERVATION !== undefined) return;
  if (cores > 1 && cores <= 3) env.LANCE_CPU_THREADS = String(cores);
}
