/**
 * The distributed side of `BENCH_INDEX=qdrant pnpm bench:scale`: API, BullMQ on the machine's
 * Redis, S3 on the npm S3 server (BENCH_BLOBS=fs: a shared folder instead), worker processes
 * and a Qdrant of its own (QDRANT_BIN, or the server at QDRANT_URL), from a fresh deployment,
 * loaded over HTTP as the embedded side is; then, if asked, the same three query sets.
 */
import { execFileSync } from "node:child_process";
import { QdrantTestServer } from "@docstore/shared/testing";
import { removeDir, startService } from "../../test/harness.ts";
import { fmt } from "./lib.ts";
import { machineTicks, processTicks } from "./distributed.ts";
import { load, querySets, serviceEnv } from "./scale-service.ts";
import { diskBytes, quietAfter, rssSampler, withCpu, MB, type Rate, type ScaleOptions } from "./scale-measure.ts";

export interface DistributedFigures {
  workers: number;
  indexedPerSec: number;
  indexSeconds: number;
  acceptedPerSec: number;
  /** Where the machine's CPU went while indexing, in cores. */
  cores: { machine: number; api: number; workers: number; qdrant: number; redis: number };
  /** CPU seconds per 1,000 documents indexed, of each part (to size a cluster from). */
  cpuPerThousand: { api: number; workers: number; qdrant: number; redis: number };
  sets?: { first: Rate; search: Rate; filtered: Rate; tag: Rate; searchSettled: Rate };
  /** Seconds Qdrant stayed busy after the load and the first searches, before the other query sets (QDRANT_BIN). */
  qdrantSettle?: number;
  /** Qdrant's process, when started here (QDRANT_BIN). */
  qdrantPeakRss?: number;
  qdrantDisk?: number;
}

export async function qdrantFigures(opts: ScaleOptions, workers: number, withQueries: boolean): Promise<DistributedFigures> {
  const qdrant = await QdrantTestServer.fromEnv();
  if (!qdrant) throw new Error("BENCH_INDEX=qdrant: set QDRANT_BIN (a Qdrant binary) or QDRANT_URL");
  const env = serviceEnv();
  if (process.env.BENCH_BLOBS === "fs") env.BLOB_STORE = "fs";
  const svc = await startService({ mode: "distributed", index: "qdrant", qdrant: { url: qdrant.url }, workers, env });
  const rss = qdrant.pid ? rssSampler(qdrant.pid) : null;
  console.log(
    `docstore distributed: API pid ${svc.proc.pid}, ${workers} worker process${workers > 1 ? "es" : ""} (WORKER_CONCURRENCY ${env.WORKER_CONCURRENCY ?? "default"}, WORKER_BATCH_SIZE ${env.WORKER_BATCH_SIZE ?? "default"}), ` +
      `blobs ${env.BLOB_STORE === "fs" ? "in a shared folder" : "on the npm S3 server"}, Qdrant ${qdrant.url}${qdrant.pid ? ` pid ${qdrant.pid}` : ""}`,
  );
  try {
    const pids = { api: svc.proc.pid, workers: svc.workers.map((w) => w.pid), qdrant: qdrant.pid, redis: redisPid() };
    const ticks = () => ({
      machine: machineTicks(),
      api: processTicks(pids.api),
      workers: pids.workers.reduce<number>((t, p) => t + processTicks(p), 0),
      qdrant: processTicks(pids.qdrant),
      redis: processTicks(pids.redis),
    });
    const before = ticks();
    const loaded = await load(svc, opts);
    const after = ticks();
    const hz = 100;
    const cores = {
      machine: ((after.machine.busy - before.machine.busy) / (after.machine.total - before.machine.total)) * 2,
      api: (after.api - before.api) / hz / loaded.seconds,
      workers: (after.workers - before.workers) / hz / loaded.seconds,
      qdrant: (after.qdrant - before.qdrant) / hz / loaded.seconds,
      redis: (after.redis - before.redis) / hz / loaded.seconds,
    };
    const indexedPerSec = loaded.ready / loaded.seconds;
    const perThousand = (c: number) => (c * loaded.seconds) / (loaded.ready / 1000);
    const cpuPerThousand = {
      api: perThousand(cores.api),
      workers: perThousand(cores.workers),
      qdrant: perThousand(cores.qdrant),
      redis: perThousand(cores.redis),
    };
    console.log(
      `  end-to-end: ${fmt(indexedPerSec)} docs/s indexed; CPU ${fmt(cores.machine, 2)} of 2 cores busy: API ${fmt(cores.api, 2)}, ` +
        `workers ${fmt(cores.workers, 2)}, Qdrant ${fmt(cores.qdrant, 2)}, Redis ${fmt(cores.redis, 2)}, the rest blobs and the load generator`,
    );
    console.log(
      `  CPU s per 1,000 documents: API ${fmt(cpuPerThousand.api, 2)}, workers ${fmt(cpuPerThousand.workers, 2)}, Qdrant ${fmt(cpuPerThousand.qdrant, 2)}, Redis ${fmt(cpuPerThousand.redis, 2)}`,
    );
    let qdrantSettle: number | undefined;
    const settle = async () => {
      if (!pids.qdrant) return;
      qdrantSettle = await quietAfter(() => processTicks(pids.qdrant));
      console.log(`  Qdrant busy for ${fmt(qdrantSettle)} s after the first searches (its optimizer), before the other query sets`);
    };
    const measure = (run: () => Promise<Rate>) => withCpu({ api: pids.api, qdrant: pids.qdrant }, processTicks, run);
    const sets = withQueries ? await querySets(svc, opts, undefined, measure, settle) : undefined;
    const qdrantPeakRss = rss?.stop();
    const qdrantDisk = qdrant.dir ? diskBytes(qdrant.dir) : undefined;
    if (qdrantPeakRss) console.log(`  Qdrant: peak RSS ${fmt(qdrantPeakRss / MB)} MB, storage ${fmt((qdrantDisk ?? 0) / MB)} MB`);
    return {
      workers,
      indexedPerSec,
      indexSeconds: loaded.seconds,
      acceptedPerSec: loaded.acceptedPerSec,
      cores,
      cpuPerThousand,
      sets,
      qdrantSettle,
      qdrantPeakRss,
      qdrantDisk,
    };
  } catch (err) {
    console.error(`distributed side failed; its output:\n` + svc.output.slice(-3000));
    throw err;
  } finally {
    rss?.stop();
    await svc.stop();
    await qdrant.close();
    removeDir(svc.dataDir);
  }
}

/** The machine's Redis server (the deployment's queue), for its CPU figures; undefined when none is found. */
function redisPid(): number | undefined {
  try {
    const pid = Number(execFileSync("pgrep", ["-o", "-x", "redis-server"], { encoding: "utf8" }).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
