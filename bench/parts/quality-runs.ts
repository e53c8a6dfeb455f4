/**
 * The searches behind `pnpm bench:quality`: one ranking of documents per query, from chunks.
 * Chunks, not documents, come back from a search: enough of them are asked for to rank the
 * documents wanted, more when they fall short.
 */
import type { SearchHit, SearchIndex } from "@docstore/shared/ports";
import { parseFilter } from "@docstore/shared/filter/parse";
import { score, type Qrels } from "./lib.ts";

/** One search: the hits' (document, chunk) in rank order for a given k. */
export type Search = (k: number) => Promise<{ docId: string; chunkIndex: number }[]>;

/** The first `want` distinct documents, asking for 1.5, 4 and then 10 times as many chunks. */
export async function rankDocuments(search: Search, want: number): Promise<string[]> {
  let ranked: string[] = [];
  for (const k of [Math.ceil(want * 1.5), want * 4, want * 10]) {
    const hits = await search(k);
    ranked = [...new Set(hits.map((h) => h.docId))];
    if (ranked.length >= want || hits.length < k) break;
  }
  return ranked.slice(0, want);
}

export interface Figures {
  ndcg10: number;
  recall100: number;
}

/**
 * nDCG@10 from the first 10 documents of a search asked for them (as a user asking for a few
 * gets them: a hybrid search fuses max(k, HYBRID_DEPTH) candidates of each ranking), Recall@100
 * from the first 100 of another.
 */
export async function measure(
  queries: { id: string; text: string }[],
  qrels: Qrels,
  searchFor: (q: { id: string; text: string }) => Search,
): Promise<Figures> {
  const top10 = new Map<string, string[]>();
  const top100 = new Map<string, string[]>();
  for (const q of queries) {
    const search = searchFor(q);
    top10.set(q.id, await rankDocuments(search, 10));
    top100.set(q.id, await rankDocuments(search, 100));
  }
  return { ndcg10: score(top10, qrels).ndcg10, recall100: score(top100, qrels).recall100 };
}

const everything = parseFilter("");

/** A search through the index port: BM25 only (no vector), dense only (no query text), or both. */
export function indexSearch(index: SearchIndex, collection: string, query: string, vector: number[] | undefined): Search {
  return async (k) => {
    const hits: SearchHit[] = await index.search({ query, vector, collections: [collection], filter: everything, k });
    return hits;
  };
}
