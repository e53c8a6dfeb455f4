/**
 * The distributed mode's figures: load requests per second (API, BullMQ on Redis, S3 on the
 * npm S3 server, SQLite index) and end-to-end indexed documents per second with one worker
 * process and with two, each from a fresh deployment, all on this one machine.
 */
import { rmSync } from "node:fs";
import { startService, type Service } from "../test/harness.ts";
import { cannon, fmt } from "./lib.ts";
import { startS3Server } from "../packages/shared/src/testing/s3-server.ts";
import { S3BlobStore } from "../packages/shared/src/blob/s3.ts";

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
  await Promise.all(Array.from({ length: 50 }, async () => {
    while (performance.now() - started < 5000) await store.put(`c/x/k${n++}`, body);
  }));
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

async function endToEnd(workers: number, blobs: Blobs, text1k: (n: number) => string, n: number): Promise<number> {
  const svc = await deployment(workers, blobs);
  try {
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
    return n / ((performance.now() - started) / 1000);
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
  console.log(`distributed load_text_to_collection, shared folder: ${fmt(viaFs)} req/s; ratio to the bare Express echo ${fmt(viaFs / echoRps, 2)}`);
  const N = 4000;
  for (const blobs of ["s3", "fs"] as const) {
    const one = await endToEnd(1, blobs, text1k, N);
    const two = await endToEnd(2, blobs, text1k, N);
    console.log(`distributed end-to-end, ${blobs === "s3" ? "S3 server" : "shared folder"} (${fmt(N)} docs): one worker ${fmt(one)} docs/s; two workers ${fmt(two)} docs/s; ratio ${fmt(two / one, 2)} (target >= 1.3)`);
  }
}
