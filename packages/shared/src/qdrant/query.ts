/**
 * The read requests: hybrid search through the Query API and the scrolls behind
 * findDocuments. Pure functions; search-index.ts only sends what they build.
 */
import type { Schemas } from "@qdrant/js-client-rest";
import { KEY, VECTORS, type Kind } from "./schema.ts";
import type { Compiled } from "./filter.ts";
import type { SparseVector } from "./sparse.ts";

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

export interface SearchShape {
  sparse: SparseVector;
  dense?: number[];
  filter: Schemas["Filter"];
}

/**
 * One Query API request over every requested collection at once (the tenant key is in the
 * filter): the sparse BM25 vector alone, or, with a dense vector, both as prefetches of
 * `depth` candidates each, fused by reciprocal rank fusion. The filter goes into each
 * prefetch, so it restricts the candidates before they are ranked.
 */
export function searchRequest(shape: SearchShape, limit: number, depth: number): Schemas["QueryRequest"] {
  if (!shape.dense) return sparseRequest(shape, limit);
  return {
    prefetch: [
      { query: shape.sparse, using: VECTORS.sparse, filter: shape.filter, limit: depth },
      { query: shape.dense, using: VECTORS.dense, filter: shape.filter, limit: depth },
    ],
    query: { fusion: "rrf" },
    filter: shape.filter,
    limit,
    with_payload: true,
  };
}

export function sparseRequest(shape: SearchShape, limit: number): Schemas["QueryRequest"] {
  return { query: shape.sparse, using: VECTORS.sparse, filter: shape.filter, limit, with_payload: true };
}

/**
 * The two rankings of a hybrid search as separate requests of one batch, for a filter Qdrant
 * cannot apply exactly: the caller post-filters each list and fuses them itself (`fuse`).
 */
export function hybridBatch(shape: SearchShape & { dense: number[] }, limit: number): Schemas["QueryRequestBatch"] {
  return {
    searches: [
      sparseRequest(shape, limit),
      { query: shape.dense, using: VECTORS.dense, filter: shape.filter, limit, with_payload: true },
    ],
  };
}

/** Qdrant's RRF (zero-based ranks, k = 2, equal weights), for rankings filtered here. */
export const RRF_K = 2;

export function fuse<P extends { id: string | number; score: number }>(rankings: readonly (readonly P[])[], limit: number): P[] {
  const fused = new Map<string | number, { point: P; score: number }>();
  for (const ranking of rankings) {
    ranking.forEach((point, rank) => {
      const entry = fused.get(point.id) ?? { point, score: 0 };
      entry.score += 1 / (RRF_K + rank);
      fused.set(point.id, entry);
    });
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || String(a.point.id).localeCompare(String(b.point.id)))
    .slice(0, limit)
    .map(({ point, score }) => ({ ...point, score }));
}

/** Payload read for every matching document: all but the text, which only the page needs. */
export const HEAD_PAYLOAD: Schemas["WithPayloadInterface"] = { exclude: [KEY.text] };

export function scrollRequest(
  filter: Schemas["Filter"],
  offset: Schemas["ExtendedPointId"] | null,
  limit: number,
  withPayload: Schemas["WithPayloadInterface"] = HEAD_PAYLOAD,
): Schemas["ScrollRequest"] {
  return { filter, limit, with_payload: withPayload, with_vector: false, ...(offset === null ? {} : { offset }) };
}

export function textRequest(ids: readonly Schemas["ExtendedPointId"][]): Schemas["PointRequest"] {
  return { ids: [...ids], with_payload: [KEY.text], with_vector: false };
}
