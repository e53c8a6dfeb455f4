// Indexing rate alone: accept N docs with no worker, then start one and time the drain.
import { startService } from "../test/harness.ts";
import { scifact, texts1k } from "./lib.ts";
const TOKEN = "bench-token-0123456789abcdef";
const text1k = texts1k(scifact().corpus);
const N = 15000;
const a = await startService({ env: { API_TOKENS: TOKEN, LOG_LEVEL: "warn", EMBEDDED_WORKER: "false" } });
for (let i = 0; i < N; i += 1000) await a.request("POST", "/load_texts_to_collection", { query: { collection_name: "d" }, json: { documents: Array.from({ length: 1000 }, (_, j) => ({ text: text1k(i + j) })) } });
await a.stop();
const extra: Record<string, string> = process.env.PROF ? { NODE_OPTIONS: "--cpu-prof --cpu-prof-dir=/tmp/prof" } : {};
const t0 = performance.now();
const b = await startService({ dataDir: a.dataDir, env: { API_TOKENS: TOKEN, LOG_LEVEL: "warn", ...extra } });
for (;;) {
  const r = await b.request("GET", "/get_list_of_collection");
  if (r.body.collections[0].ready >= N) break;
  await new Promise((r) => setTimeout(r, 100));
}
console.log("indexed", N, "in", ((performance.now() - t0) / 1000).toFixed(2), "s =", Math.round(N / ((performance.now() - t0) / 1000)), "docs/s");
await b.stop();
