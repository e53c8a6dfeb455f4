/**
 * `pnpm bench:quality`: SciFact loaded through the running service (title and text as the
 * document, `_id` as the doc_id) and its 300 test queries asked: nDCG@10 and Recall@100,
 * beside a bare FTS5 table of the same corpus.
 *   BENCH_EMBEDDINGS_URL   an OpenAI-compatible embeddings endpoint (bench/embed-server serves
 *                          one): the service embeds, and lexical, dense and hybrid are measured
 *   BENCH_EMBEDDINGS_MODEL its model (default all-MiniLM-L6-v2); the size is asked of the server
 *   BENCH_EMBEDDING_BATCH  texts per embeddings request (default 32: a CPU model is slow)
 *   BENCH_TUNE=1           tune the fusion on the 809 train queries first (embedded index)
 *   QDRANT_BIN/QDRANT_URL  the same again in distributed mode with Qdrant
 *   BENCH_ONLY=lancedb|qdrant   one index only
 * HYBRID_DEPTH, HYBRID_LEXICAL_WEIGHT, HYBRID_DENSE_WEIGHT reach the service as they are.
 * Hybrid is the service's answer over HTTP; lexical only and dense only are the same index
 * searched through its port (no query vector; no query text), which the HTTP API does not offer.
 */
import Database from "better-sqlite3";
import { rmSync } from "node:fs";
import { startService, type Service } from "../test/harness.ts";
import { qdrantSource } from "@docstore/shared/testing";
import { loadConfig } from "@docstore/shared/config";
import { OpenAIEmbedder } from "@docstore/shared/embedder/openai";
import { LanceSearchIndex } from "@docstore/shared/index/lancedb";
import { QdrantSearchIndex } from "@docstore/shared/index/qdrant/search-index";
import type { SearchIndex } from "@docstore/shared/ports";
import { fmt, scifact, score } from "./parts/lib.ts";
import { indexSearch, measure, type Figures } from "./parts/quality-runs.ts";
import { tuneFusion } from "./parts/quality-tune.ts";

type Backend = "lancedb" | "qdrant";
type Mode = "lexical" | "dense" | "hybrid";
const COLLECTION = "scifact";

const { corpus, tests, qrels } = scifact();
const train = scifact("train");
const only = process.env.BENCH_ONLY;
if (only !== undefined && only !== "lancedb" && only !== "qdrant") throw new Error(`BENCH_ONLY: lancedb or qdrant, not ${only}`);
const backends: Backend[] = (["lancedb", "qdrant"] as const).filter(
  (b) => (only ?? b) === b && (b === "lancedb" || qdrantSource() !== null),
);
if (only === "qdrant" && backends.length === 0) throw new Error("BENCH_ONLY=qdrant: set QDRANT_BIN or QDRANT_URL");

const endpoint = process.env.BENCH_EMBEDDINGS_URL;
const model = process.env.BENCH_EMBEDDINGS_MODEL ?? "all-MiniLM-L6-v2";
const dimensions = endpoint ? await dimensionsOf(endpoint, model) : 0;
const tune = process.env.BENCH_TUNE === "1";
if (tune && !endpoint) throw new Error("BENCH_TUNE=1 needs BENCH_EMBEDDINGS_URL");

/** The vector size, from one request (the model says it; a wrong EMBEDDING_DIMENSIONS fails every document). */
async function dimensionsOf(url: string, name: string): Promise<number> {
  const res = await fetch(`${url.replace(/\/$/, "")}/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: name, input: ["dimension probe"], encoding_format: "float" }),
  });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: { embedding: number[] }[] }).data[0]!.embedding.length;
}

function serviceEnv(): Record<string, string> {
  const env: Record<string, string> = { LOG_LEVEL: "warn", MAX_K: "1000" };
  for (const name of ["HYBRID_DEPTH", "HYBRID_LEXICAL_WEIGHT", "HYBRID_DENSE_WEIGHT"])
    if (process.env[name]) env[name] = process.env[name]!;
  if (!endpoint) return env;
  return {
    ...env,
    EMBEDDER: "openai",
    OPENAI_BASE_URL: endpoint,
    EMBEDDING_MODEL: model,
    EMBEDDING_DIMENSIONS: String(dimensions),
    EMBEDDING_BATCH_SIZE: process.env.BENCH_EMBEDDING_BATCH ?? "32",
    EMBEDDING_TIMEOUT_MS: "600000",
  };
}

/** Loads the corpus (1,000 documents a request) and waits until every document is ready or failed. */
async function load(svc: Service): Promise<void> {
  const documents = corpus.map((d) => ({ doc_id: d._id, text: `${d.title}\n\n${d.text}` }));
  const started = performance.now();
  for (let i = 0; i < documents.length; i += 1000) {
    const r = await svc.request("POST", "/load_texts_to_collection", {
      query: { collection_name: COLLECTION },
      json: { documents: documents.slice(i, i + 1000) },
    });
    if (r.status !== 202 && r.status !== 200) throw new Error(`load failed: ${r.status} ${JSON.stringify(r.body)}`);
  }
  let shown = 0;
  for (;;) {
    const r = await svc.request("GET", "/get_list_of_collection");
    const c = r.body.collections.find((x: { name: string }) => x.name === COLLECTION) ?? { ready: 0, failed: 0 };
    const seconds = (performance.now() - started) / 1000;
    if (c.ready + c.failed >= documents.length) {
      console.log(`  loaded ${fmt(c.ready)} documents (${fmt(c.failed)} failed) in ${fmt(seconds, 1)} s`);
      if (c.failed > 0) throw new Error(`${c.failed} documents failed; the service said:\n${svc.output.slice(-2000)}`);
      return;
    }
    if (seconds - shown >= 30) {
      shown = seconds;
      console.log(`  ${fmt(seconds)} s: ${fmt(c.ready)} of ${fmt(documents.length)} ready`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The service's own answer over HTTP: hybrid with an embedder, lexical without. */
const viaHttp = (svc: Service) => (q: { text: string }) => async (k: number) => {
  const r = await svc.request("GET", "/get_relevant_documents", { query: { query: q.text, collection_names: COLLECTION, k } });
  if (r.status !== 200) throw new Error(`search failed: ${r.status} ${JSON.stringify(r.body)}`);
  return (r.body.results as { doc_id: string; chunk_index: number }[]).map((h) => ({ docId: h.doc_id, chunkIndex: h.chunk_index }));
};

async function run(backend: Backend, embedder: OpenAIEmbedder | null): Promise<Map<Mode, Figures>> {
  console.log(`${backend === "lancedb" ? "embedded mode, LanceDB" : "distributed mode, Qdrant (one worker process)"}:`);
  const svc = await startService({
    env: serviceEnv(),
    ...(backend === "qdrant" ? { mode: "distributed" as const, index: "qdrant" as const, workers: 1 } : {}),
  });
  const figures = new Map<Mode, Figures>();
  let index: SearchIndex | null = null;
  try {
    await load(svc);
    const config = loadConfig(svc.env);
    figures.set(embedder ? "hybrid" : "lexical", await measure(tests, qrels, viaHttp(svc)));
    if (!embedder) return figures;
    const vectors = new Map<string, number[]>();
    const asked = tune && backend === "lancedb" ? [...tests, ...train.tests] : tests;
    const embedded = await embedder.embed(asked.map((q) => q.text));
    asked.forEach((q, i) => vectors.set(q.id, embedded[i]!));
    if (backend === "lancedb") {
      // The service stops first: its maintenance would remove table versions this reader is on.
      await svc.stop();
      index = new LanceSearchIndex({
        dir: config.index.dir,
        dimensions,
        maintainEveryMs: 0,
        maintainAfterRows: Infinity,
        fusion: config.search.fusion,
      });
    } else {
      index = new QdrantSearchIndex({ ...config.qdrant, dimensions, fusion: config.search.fusion });
    }
    const search = index;
    figures.set("lexical", await measure(tests, qrels, (q) => indexSearch(search, COLLECTION, q.text, undefined)));
    figures.set("dense", await measure(tests, qrels, (q) => indexSearch(search, COLLECTION, "", vectors.get(q.id))));
    if (tune && backend === "lancedb") await tuneFusion(search, COLLECTION, train.tests, train.qrels, vectors);
    return figures;
  } catch (err) {
    console.error(`the service's output:\n${svc.output.slice(-3000)}`);
    throw err;
  } finally {
    await index?.close();
    await svc.stop();
    rmSync(svc.dataDir, { recursive: true, force: true });
  }
}

/** A bare FTS5 table, one row a document, the query's words ORed: the engine's plain figure. */
function bareFts5(): Figures {
  const db = new Database(":memory:");
  db.exec("CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, body, tokenize = 'porter unicode61')");
  const insert = db.prepare("INSERT INTO docs (id, body) VALUES (?, ?)");
  db.transaction(() => corpus.forEach((d) => insert.run(d._id, `${d.title}\n\n${d.text}`)))();
  const stmt = db.prepare<[string], { id: string }>("SELECT id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 100");
  const runs = new Map(
    tests.map((q) => {
      const match = [...new Set(q.text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].map((w) => `"${w}"`).join(" OR ");
      return [q.id, stmt.all(match).map((r) => r.id)];
    }),
  );
  db.close();
  return score(runs, qrels);
}

const embedder = endpoint ? new OpenAIEmbedder({ baseUrl: endpoint, model, dimensions }) : null;
const config = loadConfig(serviceEnv());
console.log(
  `SciFact: ${fmt(corpus.length)} documents, ${tests.length} test queries; ` +
    (embedder
      ? `embeddings ${model} (${dimensions} dimensions) at ${endpoint}; fusion: depth ${config.search.fusion.depth}, weights ${config.search.fusion.lexicalWeight} (BM25) : ${config.search.fusion.denseWeight} (dense)`
      : "no embeddings endpoint (BENCH_EMBEDDINGS_URL): lexical only"),
);
const results = new Map<Backend, Map<Mode, Figures>>();
for (const backend of backends) results.set(backend, await run(backend, embedder));
await embedder?.close();

const cell = (f: Figures | undefined) => (f ? `${fmt(f.ndcg10, 4)} / ${fmt(f.recall100, 4)}` : "-");
const rows: string[][] = [
  ["nDCG@10 / Recall@100", ...backends.map((b) => (b === "lancedb" ? "embedded (LanceDB)" : "distributed (Qdrant)"))],
];
const labels: Record<Mode, string> = { lexical: "lexical (BM25)", dense: "dense", hybrid: "hybrid (RRF)" };
for (const mode of ["lexical", "dense", "hybrid"] as const) {
  if (backends.some((b) => results.get(b)!.has(mode))) rows.push([labels[mode], ...backends.map((b) => cell(results.get(b)!.get(mode)))]);
}
rows.push(["bare FTS5, one row a doc", cell(bareFts5()), ...backends.slice(1).map(() => "")]);
const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
console.log("");
for (const r of rows) console.log(r.map((v, c) => (c === 0 ? v.padEnd(widths[c]!) : v.padStart(widths[c]!))).join("   "));
console.log("published BM25: nDCG@10 0.665-0.679, Recall@100 0.908-0.925; all-MiniLM-L6-v2 alone (MTEB): nDCG@10 0.645");
for (const backend of backends) {
  const f = results.get(backend)!;
  const hybrid = f.get("hybrid");
  if (!hybrid) continue;
  const beats = hybrid.ndcg10 > f.get("lexical")!.ndcg10 && hybrid.ndcg10 > f.get("dense")!.ndcg10;
  console.log(`${backend}: hybrid ${beats ? "beats" : "does NOT beat"} both of its parts on nDCG@10`);
}
