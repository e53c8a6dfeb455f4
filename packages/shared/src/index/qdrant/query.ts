/**
 * The read requests: hybrid search through the Query API and the scrolls behind
 * findDocuments. Pure functions; search-index.ts only sends what they build.
 */
import type { Schemas } from "@qdrant/js-client-rest";
import { KEY, VECTORS, type Kind } from "./schema.ts";
import type { Compiled } from "../../filter/qdrant.ts";
import type { SparseVector } from "./sparse.ts";
import { DEFAULT_FUSION, RRF_K, type HybridFusion } from "../../search/fusion.ts";

/**
 * Points of one kind in the requested docstore collections that meet the compiled filter, or
 * null when none can (the filter compiled to "match nothing").
 */
export function scopeFilter(kind: Kind, collections: readonly string[], condition: Compiled): Schemas["Filter"] | null {
  if (condition === false || collections.length === 0) return null;
  const must: Schemas["Condition"][] = [
    { key: KEY.kind, match: { value: kind } },
    { key: KEY.collection, match: { any: [...new Set(collections)] } },
  ];
  if (condition !== true) must.push(condition);
  return { must };
}

/** One ranking of a search: the sparse BM25 vector, or the dense vector, and its weight in the fusion. */
export interface Ranker {
  using: string;
  query: SparseVector | number[];
  weight: number;
}

/** The rankings a search combines: BM25 when the query has terms, cosine when it has a vector. */
export function rankers(sparse: SparseVector | undefined, dense: number[] | undefined, fusion: HybridFusion = DEFAULT_FUSION): Ranker[] {
  return [
    ...(sparse && sparse.indices.length > 0 ? [{ using: VECTORS.sparse, query: sparse, weight: fusion.lexicalWeight }] : []),
    ...(dense ? [{ using: VECTORS.dense, query: dense, weight: fusion.denseWeight }] : []),
  ];
}

/**
 * Qdrant's RRF constant for the ranking of search/fusion.ts: that scores 1 / (rank / w + 60),
 * ranks counted from 1; Qdrant scores 1 / (rank / w + k - 1), so k is 61 here.
 */
export const QDRANT_RRF_K = RRF_K + 1;

/**
 * One Query API request over every requested collection at once (the tenant key is in the
 * filter): one ranking alone, or both as prefetches of `depth` candidates each, fused by
 * reciprocal rank fusion with the rankings' weights (sent only when one differs from 1). The
 * filter goes into each prefetch, so it restricts the candidates before they are ranked, and
 * stays on the fused result.
 */
export function searchRequest(
  ranking: readonly Ranker[],
  filter: Schemas["Filter"],
  limit: number,
  depth: number,
): Schemas["QueryRequest"] {
  const [only, ...more] = ranking;
  if (!only) throw new Error("searchRequest: nothing to rank by");
  if (more.length === 0) return { query: only.query, using: only.using, filter, limit, with_payload: true };
  return {
    prefetch: ranking.map((r) => ({ query: r.query, using: r.using, filter, limit: depth })),
    query: { rrf: { k: QDRANT_RRF_K, ...(ranking.every((r) => r.weight === 1) ? {} : { weights: ranking.map((r) => r.weight) }) } },
    filter,
    limit,
    with_payload: true,
  };
}

/**
 * Each ranking as its own request of one batch, for a filter Qdrant cannot apply exactly: the
 * caller post-filters each list and fuses what passes (search/fusion.ts).
 */
export function rankingBatch(ranking: readonly Ranker[], filter: Schemas["Filter"], limit: number): Schemas["QueryRequestBatch"] {
  return { searches: ranking.map((r) => ({ query: r.query, using: r.using, filter, limit, with_payload: true })) };
}

/** Payload read for every matching document: all but the text, which only the page needs. */
export const HEAD_PAYLOAD: Schemas["WithPayloadInterface"] = { exclude: [KEY.text] };

/** What the first page of an ordered lookup reads: everything a document shown needs, in one request. */
export const WHOLE_PAYLOAD = [KEY.collection, KEY.docId, KEY.version, KEY.textPoint, KEY.metadata, KEY.text];

export function scrollRequest(
  filter: Schemas["Filter"],
  offset: Schemas["ExtendedPointId"] | null,
  limit: number,
  withPayload: Schemas["WithPayloadInterface"] = HEAD_PAYLOAD,
): Schemas["ScrollRequest"] {
  return { filter, limit, with_payload: withPayload, with_vector: false, ...(offset === null ? {} : { offset }) };
}

/** The texts of some document points, and with `metadata` their metadata too. */
export function textRequest(ids: readonly Schemas["ExtendedPointId"][], metadata = false): Schemas["PointRequest"] {
  return { ids: [...ids], with_payload: metadata ? [KEY.text, KEY.metadata] : [KEY.text], with_vector: false };
}
