/**
 * `pnpm bench:quality`: SciFact loaded through the running service (title and text as the
 * document, `_id` as the doc_id), the 300 test queries asked over HTTP, nDCG@10 and
 * Recall@100 printed beside a bare FTS5 table of the same corpus.
 */
import Database from "better-sqlite3";
import { rmSync } from "node:fs";
import { startService } from "../test/harness.ts";
import { fmt, scifact, score } from "./lib.ts";

const { corpus, tests, qrels } = scifact();
const svc = await startService({ env: { LOG_LEVEL: "warn", MAX_K: "1000" } });
try {
  const documents = corpus.map((d) => ({ doc_id: d._id, text: `${d.title}\n\n${d.text}` }));
  const started = performance.now();
  for (let i = 0; i < documents.length; i += 1000) {
    const r = await svc.request("POST", "/load_texts_to_collection", { query: { collection_name: "scifact", wait: "true" }, json: { documents: documents.slice(i, i + 1000) } });
    if (r.status !== 200) throw new Error(`load failed: ${JSON.stringify(r.body)}`);
  }
  const cols = await svc.request("GET", "/get_list_of_collection");
  console.log(`loaded ${fmt(corpus.length)} documents in ${fmt((performance.now() - started) / 1000, 1)} s:`, JSON.stringify(cols.body.collections));

  // Chunks, not documents, come back: ask for enough of them to rank 100 distinct documents.
  const runs = new Map<string, string[]>();
  let chunksNeeded = 0;
  for (const q of tests) {
    let ranked: string[] = [];
    for (const k of [150, 400, 1000]) {
      const r = await svc.request("GET", "/get_relevant_documents", { query: { query: q.text, collection_names: "scifact", k } });
      ranked = [...new Set<string>(r.body.results.map((h: { doc_id: string }) => h.doc_id))];
      if (ranked.length >= 100 || r.body.results.length < k) break;
    }
    chunksNeeded = Math.max(chunksNeeded, ranked.length);
    runs.set(q.id, ranked.slice(0, 100));
  }
  const ours = score(runs, qrels);

  const db = new Database(":memory:");
  db.exec("CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, body, tokenize = 'porter unicode61')");
  const insert = db.prepare("INSERT INTO docs (id, body) VALUES (?, ?)");
  db.transaction(() => corpus.forEach((d) => insert.run(d._id, `${d.title}\n\n${d.text}`)))();
  const stmt = db.prepare<[string], { id: string }>("SELECT id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 100");
  const bareRuns = new Map(tests.map((q) => {
    const match = [...new Set(q.text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].map((w) => `"${w}"`).join(" OR ");
    return [q.id, stmt.all(match).map((r) => r.id)];
  }));
  const bare = score(bareRuns, qrels);

  console.log(`docstore (HTTP, chunked):  nDCG@10 ${fmt(ours.ndcg10, 4)}  Recall@100 ${fmt(ours.recall100, 4)}  (target nDCG@10 >= 0.68)`);
  console.log(`bare FTS5 (one row a doc): nDCG@10 ${fmt(bare.ndcg10, 4)}  Recall@100 ${fmt(bare.recall100, 4)}`);
  console.log("published BM25: nDCG@10 0.665-0.679, Recall@100 0.908-0.925");
} finally {
  await svc.stop();
  rmSync(svc.dataDir, { recursive: true, force: true });
}
