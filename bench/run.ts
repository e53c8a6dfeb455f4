/**
 * `pnpm bench`: throughput and latency of the embedded service, each beside its ceiling
 * measured in the same run on the same machine, then the distributed mode's figures, then
 * extraction throughput. Prints figures; asserts nothing.
 * BENCH_ONLY=load|search|distributed|extract runs a part.
 */
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { startService, type Service } from "../test/harness.ts";
import { cannon, fmt, scifact, startEcho, texts1k } from "./parts/lib.ts";
import { distributedFigures } from "./parts/distributed.ts";

const TOKEN = "bench-token-0123456789abcdef";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

/** The ceiling of any Express service here: requests per second of a bare JSON echo. */
async function bareEcho(text1k: (n: number) => string): Promise<number> {
  const echo = await startEcho();
  const body = JSON.stringify({ text: text1k(1), metadata: { status: "open", priority: 2 } });
  const bare = await cannon({ url: `${echo.url}/echo`, method: "POST", headers: { "content-type": "application/json" }, body });
  echo.stop();
  return bare.requests.average;
}

async function loadThroughput(svc: Service, text1k: (n: number) => string, echoRps: number) {
  let n = 0;
  const load = await cannon({
    url: `${svc.url}/load_text_to_collection?collection_name=bench-load`,
    method: "POST",
    headers: auth,
    requests: [
      { setupRequest: (req) => ({ ...req, body: JSON.stringify({ text: text1k(n++), metadata: { status: "open", priority: n % 5 } }) }) },
    ],
  });
  const ratio = load.requests.average / echoRps;
  console.log(
    `load_text_to_collection: ${fmt(load.requests.average)} req/s; bare Express echo: ${fmt(echoRps)} req/s; ratio ${fmt(ratio, 2)} (target >= 0.3)`,
  );
}

/** Waits until nothing is pending anywhere, so the next measurement starts from an idle queue. */
async function drain(svc: Service, label: string) {
  const started = performance.now();
  let backlog = 0;
  for (;;) {
    const r = await svc.request("GET", "/get_list_of_collection");
    const pending = r.body.collections.reduce((n: number, c: { pending: number }) => n + c.pending, 0);
    backlog = Math.max(backlog, pending);
    if (pending === 0) break;
    await new Promise((res) => setTimeout(res, 200));
  }
  if (backlog > 0)
    console.log(`  (${label}: a backlog of ${fmt(backlog)} queued documents indexed in ${fmt((performance.now() - started) / 1000, 1)} s)`);
}

async function waitIndexed(svc: Service, collection: string, total: number) {
  for (;;) {
    const r = await svc.request("GET", "/get_list_of_collection");
    const c = r.body.collections.find((x: { name: string }) => x.name === collection);
    if (c && c.ready + c.failed >= total) return;
    await new Promise((res) => setTimeout(res, 200));
  }
}

async function endToEnd(svc: Service, corpusCollection: string, queries: string[], text1k: (n: number) => string) {
  const N = 15_000;
  const latencies: number[] = [];
  // A steady read load of 20 searches a second beside the writes, each latency recorded.
  let searching = true;
  const searcher = (async () => {
    let i = 0;
    while (searching) {
      await new Promise((r) => setTimeout(r, 50));
      const t = performance.now();
      await svc.request("GET", "/get_relevant_documents", {
        query: { query: queries[i++ % queries.length]!, collection_names: corpusCollection, k: 10 },
      });
      latencies.push(performance.now() - t);
    }
  })();
  const started = performance.now();
  let n = 0;
  await cannon({
    url: `${svc.url}/load_text_to_collection?collection_name=bench-e2e`,
    method: "POST",
    headers: auth,
    amount: N,
    requests: [
      { setupRequest: (req) => ({ ...req, body: JSON.stringify({ text: text1k(1_000_000 + n++), metadata: { priority: n % 7 } }) }) },
    ],
  });
  await waitIndexed(svc, "bench-e2e", N);
  const seconds = (performance.now() - started) / 1000;
  searching = false;
  await searcher;
  latencies.sort((a, b) => a - b);
  const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  console.log(`end-to-end: ${fmt(N)} docs loaded and searchable in ${fmt(seconds, 1)} s = ${fmt(N / seconds)} docs/s (target 1,500)`);
  console.log(`search latency under that load (${fmt(latencies.length)} searches): p50 ${fmt(p(0.5), 1)} ms, p99 ${fmt(p(0.99), 1)} ms`);
}

async function searchThroughput(
  svc: Service,
  collection: string,
  corpus: { _id: string; title: string; text: string }[],
  queries: string[],
) {
  // The engine's ceiling: a bare FTS5 table of the same corpus, the query's words ORed, top 10.
  const dir = mkdtempSync(path.join(tmpdir(), "bench-fts-"));
  const db = new Database(path.join(dir, "bare.sqlite"));
  db.exec("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize = 'porter unicode61')");
  const insert = db.prepare("INSERT INTO docs (rowid, body) VALUES (?, ?)");
  db.transaction(() => corpus.forEach((d, i) => insert.run(i + 1, `${d.title}\n\n${d.text}`)))();
  const stmt = db.prepare("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 10");
  const matches = queries.map((q) => [...new Set(q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].map((w) => `"${w}"`).join(" OR "));
  let runs = 0;
  const until = performance.now() + 10_000;
  while (performance.now() < until) stmt.all(matches[runs++ % matches.length]);
  const bareQps = runs / 10;
  db.close();
  rmSync(dir, { recursive: true, force: true });

  let i = 0;
  const http = await cannon({
    url: `${svc.url}/get_relevant_documents`,
    connections: 8,
    headers: auth,
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          path: `/get_relevant_documents?k=10&collection_names=${collection}&query=${encodeURIComponent(queries[i++ % queries.length]!)}`,
        }),
      },
    ],
  });
  const ratio = http.requests.average / bareQps;
  console.log(
    `get_relevant_documents (SciFact, 300 test queries): ${fmt(http.requests.average)} req/s over HTTP; bare FTS5 loop: ${fmt(bareQps)} queries/s; ratio ${fmt(ratio, 2)} (target >= 0.6)`,
  );
}

async function main() {
  const { corpus, tests } = scifact();
  const queries = tests.map((t) => t.text);
  const only = process.env.BENCH_ONLY;
  console.log(`docstore bench (Node ${process.version}, one run, same machine)`);
  if (only === "extract") return extractionFigures();
  const echoRps = await bareEcho(texts1k(corpus));
  if (only === "distributed") return distributedFigures(texts1k(corpus), echoRps);
  const svc = await startService({ env: { API_TOKENS: TOKEN, LOG_LEVEL: "warn" } });
  try {
    const documents = corpus.map((d) => ({ doc_id: d._id, text: `${d.title}\n\n${d.text}` }));
    for (let i = 0; i < documents.length; i += 1000) {
      await svc.request("POST", "/load_texts_to_collection", {
        query: { collection_name: "scifact", wait: "true" },
        json: { documents: documents.slice(i, i + 1000) },
      });
    }
    if (!only || only === "load") {
      await loadThroughput(svc, texts1k(corpus), echoRps);
      await drain(svc, "after the load test");
    }
    if (!only || only === "search") await searchThroughput(svc, "scifact", corpus, queries);
    await endToEnd(svc, "scifact", queries, texts1k(corpus));
  } catch (err) {
    console.error(`bench failed; service exit ${svc.proc.exitCode} ${svc.proc.signalCode}; output:\n` + svc.output.slice(-3000));
    throw err;
  } finally {
    await svc.stop();
    rmSync(svc.dataDir, { recursive: true, force: true });
  }
  if (!only) await distributedFigures(texts1k(corpus), echoRps);
  if (!only || only === "extract") extractionFigures();
}

/** Extraction throughput and memory: each script prints its own figures, in a process of its own. */
function extractionFigures() {
  for (const script of ["extract-pdf.ts", "extract-office.ts"]) {
    spawnSync(process.execPath, [path.join(import.meta.dirname, "parts", script)], { stdio: "inherit" });
  }
}

await main();
