/**
 * The distributed mode's figures: load requests per second (API, BullMQ on Redis, S3 on the
 * npm S3 server, the shared LanceDB index) and end-to-end indexed documents per second with one worker
 * process and with two, each from a fresh deployment, all on this one machine.
 */
import { readFileSync, rmSync } from "node:fs";
import { startService, type Service } from "../../test/harness.ts";
import { cannon, fmt } from "./lib.ts";
import { statTicks } from "./scale-measure.ts";
import { startS3Server } from "@docstore/shared/testing";
import { S3BlobStore } from "@docstore/shared/blob/s3";

const TOKEN = "bench-token-0123456789abcdef";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const env = { API_TOKENS: TOKEN, LOG_LEVEL: "warn" };

type Blobs = "s3" | "fs";

/** API, BullMQ and worker processes; raw files on the npm S3 server, or in a folder they share. */
async function deployment(workers: number, blobs: Blobs): Promise<Service> {
  return startService({ mode: "distributed", workers, env: blobs === "fs" ? { ...env, BLOB_STORE: "fs" } : env });
}

/** What the S3 server used here can take at most: 1 KB PUTs, 50 in flight, for 5 s. */
async function s3Ceiling(): Promise<number> {
  const s3 = await startS3Server();
  const store = new S3BlobStore(s3.config);
  const body = Buffer.alloc(1024, 97);
  let n = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (performance.now() - started < 5000) await store.put(`c/x/k${n++}`, body);
    }),
  );
  const rate = n / ((performance.now() - started) / 1000);
  store.close();
  await s3.stop();
  return rate;
}

async function close(svc: Service) {
  await svc.stop();
  rmSync(svc.dataDir, { recursive: true, force: true });
}

async function ready(svc: Service, collection: string): Promise<number> {
  const r = await svc.request("GET", "/get_list_of_collection");
  const c = r.body.collections.find((x: { name: string }) => x.name === collection);
  return c ? c.ready + c.failed : 0;
}

/** Busy and total jiffies of the whole machine, from /proc/stat. */
export function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** CPU jiffies a process has used (user + system). */
export function processTicks(pid: number | undefined): number {
  return pid ? statTicks(`/proc/${pid}/stat`) : 0;
}

interface Run {
  rate: number;
  /** Where the machine's CPU went during the run, in cores. */
  cores: { machine: number; api: number; workers: number };
}

async function endToEnd(workers: number, blobs: Blobs, text1k: (n: number) => string, n: number): Promise<Run> {
  const svc = await deployment(workers, blobs);
  try {
    const m0 = machineTicks();
    const api0 = processTicks(svc.proc.pid);
    const w0 = svc.workers.reduce((t, w) => t + processTicks(w.pid), 0);
    const started = performance.now();
    let i = 0;
    await cannon({
      url: `${svc.url}/load_text_to_collection?collection_name=e2e`,
      method: "POST",
      headers: auth,
      amount: n,
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ text: text1k(2_000_000 + i++) }) }) }],
    });
    while ((await ready(svc, "e2e")) < n) await new Promise((r) => setTimeout(r, 200));
    const seconds = (performance.now() - started) / 1000;
    const m1 = machineTicks();
    const hz = 100;
    const cores = {
      machine: ((m1.busy - m0.busy) / (m1.total - m0.total)) * 2,
      api: (processTicks(svc.proc.pid) - api0) / hz / seconds,
      workers: (svc.workers.reduce((t, w) => t + processTicks(w.pid), 0) - w0) / hz / seconds,
    };
    return { rate: n / seconds, cores };
  } finally {
    await close(svc);
  }
}

async function loadRate(blobs: Blobs, text1k: (n: number) => string): Promise<number> {
  const svc = await deployment(2, blobs);
  let i = 0;
  try {
    const load = await cannon({
      url: `${svc.url}/load_text_to_collection?collection_name=load`,
      method: "POST",
      headers: auth,
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ text: text1k(i++) }) }) }],
    });
    return load.requests.average;
  } finally {
    await close(svc);
  }
}

export async function distributedFigures(text1k: (n: number) => string, echoRps: number): Promise<void> {
  const ceiling = await s3Ceiling();
  const viaS3 = await loadRate("s3", text1k);
  console.log(
    `distributed load_text_to_collection, S3 server: ${fmt(viaS3)} req/s; ratio to the bare Express echo ${fmt(viaS3 / echoRps, 2)} ` +
      `(target >= 0.25); the S3 server alone takes ${fmt(ceiling)} PUT/s (ratio ${fmt(viaS3 / ceiling, 2)})`,
  );
  const viaFs = await loadRate("fs", text1k);
  console.log(
    `distributed load_text_to_collection, shared folder: ${fmt(viaFs)} req/s; ratio to the bare Express echo ${fmt(viaFs / echoRps, 2)}`,
  );
  const N = 4000;
  const where = (r: Run) =>
    `machine CPU ${fmt(r.cores.machine, 2)} of 2 cores busy: API ${fmt(r.cores.api, 2)}, workers ${fmt(r.cores.workers, 2)}, ` +
    `the rest Redis, the S3 server and the load generator`;
  for (const blobs of ["s3", "fs"] as const) {
    const one = await endToEnd(1, blobs, text1k, N);
    const two = await endToEnd(2, blobs, text1k, N);
    console.log(
      `distributed end-to-end, ${blobs === "s3" ? "S3 server" : "shared folder"} (${fmt(N)} docs): one worker ${fmt(one.rate)} docs/s; ` +
        `two workers ${fmt(two.rate)} docs/s; ratio ${fmt(two.rate / one.rate, 2)} (target >= 1.3)`,
    );
    console.log(`  one worker: ${where(one)}`);
    console.log(`  two workers: ${where(two)}`);
  }
}
