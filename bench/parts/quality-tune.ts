/**
 * The hybrid fusion tuned on SciFact's train queries (never the test queries): each query's
 * BM25 and dense rankings are read once from the index, deep enough for every setting tried,
 * then fused here as the index fuses them (search/fusion.ts, the top max(k, depth) of each
 * ranking), and nDCG@10 is computed for each candidate depth and pair of weights.
 */
import type { SearchIndex } from "@docstore/shared/ports";
import { DEFAULT_FUSION, RRF_K, reciprocalRankFusion, type HybridFusion } from "@docstore/shared/search/fusion";
import { fmt, score, type Qrels } from "./lib.ts";
import { indexSearch, rankDocuments, type Search } from "./quality-runs.ts";

const DEPTHS = [10, 20, 50, 100, 200, 400, 1000];
const LEXICAL_WEIGHTS = [0.5, 1, 2, 3];
const DENSE_WEIGHTS = [0.25, 0.5, 0.75, 1, 1.5, 2, 3];
const DEEPEST = Math.max(...DEPTHS);

type Hit = { docId: string; chunkIndex: number };
const key = (h: Hit) => `${h.docId}#${h.chunkIndex}`;

export async function tuneFusion(
  index: SearchIndex,
  collection: string,
  queries: { id: string; text: string }[],
  qrels: Qrels,
  vectors: Map<string, number[]>,
): Promise<HybridFusion> {
  const lists = new Map<string, [Hit[], Hit[]]>();
  for (const q of queries) {
    const lexical = await indexSearch(index, collection, q.text, undefined)(DEEPEST);
    const dense = await indexSearch(index, collection, "", vectors.get(q.id))(DEEPEST);
    lists.set(q.id, [lexical, dense]);
  }
  const ndcg = async (search: (q: string) => Search) => {
    const runs = new Map<string, string[]>();
    for (const q of queries) runs.set(q.id, await rankDocuments(search(q.id), 10));
    return score(runs, qrels).ndcg10;
  };
  const fused =
    (fusion: HybridFusion) =>
    (q: string): Search =>
    async (k) => {
      const [lexical, dense] = lists.get(q)!;
      const depth = Math.max(k, fusion.depth);
      return reciprocalRankFusion([lexical.slice(0, depth), dense.slice(0, depth)], key, RRF_K, [fusion.lexicalWeight, fusion.denseWeight])
        .slice(0, k)
        .map((f) => f.item);
    };
  const lexicalOnly = await ndcg((q) => async (k) => lists.get(q)![0].slice(0, k));
  const denseOnly = await ndcg((q) => async (k) => lists.get(q)![1].slice(0, k));
  const results: { fusion: HybridFusion; ndcg10: number }[] = [];
  for (const depth of DEPTHS) {
    for (const lexicalWeight of LEXICAL_WEIGHTS) {
      for (const denseWeight of DENSE_WEIGHTS) {
        const fusion = { depth, lexicalWeight, denseWeight };
        results.push({ fusion, ndcg10: await ndcg(fused(fusion)) });
      }
    }
  }
  // Best first; among equals, the shallower and the less weighted (ties are common: 809 queries).
  results.sort((a, b) => b.ndcg10 - a.ndcg10 || a.fusion.depth - b.fusion.depth || a.fusion.denseWeight - b.fusion.denseWeight);
  const label = (f: HybridFusion) => `depth ${f.depth}, weights ${f.lexicalWeight} (BM25) : ${f.denseWeight} (dense)`;
  console.log(
    `\nfusion tuned on ${queries.length} train queries (nDCG@10): BM25 alone ${fmt(lexicalOnly, 4)}, dense alone ${fmt(denseOnly, 4)}`,
  );
  const current = results.find((r) => JSON.stringify(r.fusion) === JSON.stringify(DEFAULT_FUSION));
  const plain = await ndcg(fused({ depth: 100, lexicalWeight: 1, denseWeight: 1 }));
  console.log(
    `  plain RRF (depth 100, weights 1 : 1): ${fmt(plain, 4)}; the current defaults (${label(DEFAULT_FUSION)}): ${current ? fmt(current.ndcg10, 4) : "not in the grid"}`,
  );
  console.log(`  best ${Math.min(10, results.length)} of ${results.length} settings tried:`);
  for (const r of results.slice(0, 10)) console.log(`    ${fmt(r.ndcg10, 4)}  ${label(r.fusion)}`);
  const best = results[0]!;
  console.log(`  by depth, best weights each:`);
  for (const depth of DEPTHS) {
    const top = results.find((r) => r.fusion.depth === depth)!;
    console.log(`    ${fmt(top.ndcg10, 4)}  ${label(top.fusion)}`);
  }
  return best.fusion;
}
