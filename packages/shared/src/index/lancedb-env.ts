/**
 * Sizes LanceDB's threads for this process (lanceComputeThreads). Imported for its effect, first
 * thing, by the shared package's entry (and by benches that load LanceDB themselves): LanceDB
 * builds its async runtime as its module loads, with the worker threads `TOKIO_WORKER_THREADS`
 * asks for then.
 */
import { availableParallelism } from "node:os";
import { setLanceThreads } from "../config.ts";
import { lanceComputeThreads } from "./lancedb-threads.ts";

setLanceThreads((set) => lanceComputeThreads(set, availableParallelism()));
