/**
 * Hybrid ranking: the lexical (BM25) and dense (cosine) candidate lists are fused by
 * reciprocal rank fusion, which needs only ranks, so the two scores never have to be put on
 * one scale. Every index backend calls this same function, so both modes rank alike.
 */

export interface Fused<T> {
  item: T;
  score: number;
}

/** RRF's usual constant (Cormack et al., 2009): large enough that no single list dominates. */
export const RRF_K = 60;

/** How a hybrid search fuses its lexical (BM25) and dense rankings; the same in every index. */
export interface HybridFusion {
  /** Candidates each ranking contributes before fusion (at least the k asked for). */
  depth: number;
  /** Weight of the BM25 ranking in the fusion (see reciprocalRankFusion). */
  lexicalWeight: number;
  /** Weight of the dense ranking. */
  denseWeight: number;
}

/**
 * The defaults, tuned on SciFact's 809 train queries (never its test queries) with
 * all-MiniLM-L6-v2 over 512-token chunks (`pnpm bench:quality` with BENCH_TUNE=1 prints the
 * grid). nDCG@10 there: BM25 alone 0.698, dense alone 0.644, RRF of the first 100 of each 0.695
 * (below BM25 alone), of the first 10 (or k, if more) 0.708; weights other than 1 : 1 gained
 * nothing at that depth.
 */
export const DEFAULT_FUSION: HybridFusion = { depth: 10, lexicalWeight: 1, denseWeight: 1 };

/**
 * score(d) = Σ over lists containing d of 1 / (rank / w + k), rank counted from 1, w the
 * list's weight (1 when no weights are given): Qdrant's weighted RRF, so that both indexes
 * rank alike. A weight w counts rank r as r / w: with 2, the second item of a list scores as
 * the first of a list of weight 1.
 * An item repeated within one list counts once, at its best rank; the item returned is the
 * first occurrence seen. Ties (equal scores) are broken by the best rank the item reached in
 * any list, then by the order of first appearance, lists taken in the order given: the result
 * is deterministic for the same input.
 */
export function reciprocalRankFusion<T>(
  lists: readonly (readonly T[])[],
  key: (item: T) => string,
  k: number = RRF_K,
  weights?: readonly number[],
): Fused<T>[] {
  if (!(k >= 0)) throw new RangeError(`RRF constant k must be >= 0, got ${k}`);
  if (weights && weights.length !== lists.length) throw new RangeError(`RRF weights: ${weights.length} for ${lists.length} lists`);
  if (weights?.some((w) => !(w > 0 && Number.isFinite(w)))) throw new RangeError(`RRF weights must be positive, got ${weights.join(", ")}`);
  const entries = new Map<string, { item: T; score: number; bestRank: number; seen: number }>();
  lists.forEach((list, l) => {
    const weight = weights?.[l] ?? 1;
    const inThisList = new Set<string>();
    list.forEach((item, i) => {
      const id = key(item);
      if (inThisList.has(id)) return;
      inThisList.add(id);
      const rank = i + 1;
      const score = 1 / (rank / weight + k);
      const entry = entries.get(id);
      if (entry) {
        entry.score += score;
        entry.bestRank = Math.min(entry.bestRank, rank);
      } else {
        entries.set(id, { item, score, bestRank: rank, seen: entries.size });
      }
    });
  });
  return [...entries.values()]
    .sort((a, b) => b.score - a.score || a.bestRank - b.bestRank || a.seen - b.seen)
    .map(({ item, score }) => ({ item, score }));
}

type Vector = ArrayLike<number>;

/** The dot product; for unit vectors it is their cosine similarity. */
export function dot(a: Vector, b: Vector): number {
  if (a.length !== b.length) throw new RangeError(`vectors differ in length: ${a.length} and ${b.length}`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

/** A unit-length Float32 copy (a zero vector stays zero), so that cosine is a plain dot product. */
export function normalize(v: Vector): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += (v[i] as number) ** 2;
  norm = Math.sqrt(norm);
  const out = new Float32Array(v.length);
  if (norm === 0) return out;
  for (let i = 0; i < v.length; i++) out[i] = (v[i] as number) / norm;
  return out;
}

/** Cosine similarity of any two vectors; 0 when either is zero. */
export function cosine(a: Vector, b: Vector): number {
  const na = Math.sqrt(dot(a, a));
  const nb = Math.sqrt(dot(b, b));
  return na === 0 || nb === 0 ? 0 : dot(a, b) / (na * nb);
}
