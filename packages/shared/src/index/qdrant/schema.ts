/**
 * The layout of the one Qdrant collection that holds every docstore collection.
 *
 * Two kinds of point share it, told apart by the `kind` payload key: one point per chunk (the
 * sparse BM25 vector, and the dense vector when an embedder is configured) and one point per
 * document (no vector; its metadata and full text, for `findDocuments`). A document whose one
 * chunk is its whole text is one point of both kinds (`kind: ["chunk", "document"]`; a
 * keyword match on `kind` matches either): its text, metadata and vectors are stored once, and
 * a lookup by filter reads it in one request. Keeping both kinds in one Qdrant collection lets
 * a batch's document points and the removal of what their versions supersede go in one batch
 * request (see write.ts), which two collections could not do.
 *
 * Payload of every point: `collection` (the tenant key), `doc_id`, `version`, `metadata` (the
 * document's metadata as given), and three keyword lists derived from the metadata that let
 * filters Qdrant has no operator for be exact (filter/qdrant.ts): `meta_keys` (the keys present),
 * `meta_blank` (keys whose value is ""), `meta_same` ("a=b" for each pair of keys a < b holding
 * the same JSON value). Chunks add `chunk_index`, `start`, `end`, `text`; documents add `text`
 * and `sha256`. A collection written before one-point documents may hold document points
 * without `text` whose `text_point` names the chunk point holding it: reads follow it, and
 * writing such a document again leaves it one point (write.ts).
 */
import type { Schemas } from "@qdrant/js-client-rest";
import { KNOWN_FIELD_TYPES } from "../../domain/metadata.ts";

export const DEFAULT_COLLECTION = "docstore";

export const VECTORS = { dense: "dense", sparse: "bm25" } as const;

export const KIND = {
  chunk: "chunk",
  document: "document",
} as const;
export type Kind = (typeof KIND)[keyof typeof KIND];

/** Payload keys; metadata fields are under `metadata.<field>`. */
export { KEY, metadataKey } from "../../filter/qdrant-payload.ts";
import { KEY, metadataKey } from "../../filter/qdrant-payload.ts";

/** How the collection is laid out across a cluster's nodes, when it is created. */
export interface Placement {
  /** Shards of the collection (Qdrant's default, 1, when left out). */
  shards?: number;
  /** Copies of each shard (2 survives losing a node). */
  replicationFactor?: number;
}

/**
 * Below this many filtered points a segment scores each of them in turn instead of walking its
 * inverted index (Qdrant's default is 5,000). Every search filters on `kind`, which matches
 * every chunk, so with the default a segment of fewer than 5,000 chunks scored all of them for
 * every search: 1.2 ms of Qdrant's CPU a search against 0.05-0.09 ms through the index, on a
 * segment of 4,993 chunks (docs/benchmarks.md). Scoring one point costs about 0.25 µs, so a
 * small tenant's search still takes the scoring path.
 */
export const SPARSE_FULL_SCAN_THRESHOLD = 1_000;

/** The sparse vector's parameters: BM25 with Qdrant's IDF, and the threshold above. */
export const SPARSE_PARAMS = { modifier: "idf", index: { full_scan_threshold: SPARSE_FULL_SCAN_THRESHOLD } } as const;

/**
 * The BM25 sparse vector with Qdrant's IDF, and dense vectors of `dimensions` (cosine) when an
 * embedder gives them (null: none, so no point carries or stores one).
 */
export function createCollectionRequest(dimensions: number | null, placement: Placement = {}): Schemas["CreateCollection"] {
  if (dimensions !== null && (!Number.isSafeInteger(dimensions) || dimensions < 1))
    throw new Error(`Qdrant index: invalid dense vector size ${dimensions}`);
  const { shards = 1, replicationFactor = 1 } = placement;
  if (!Number.isSafeInteger(shards) || shards < 1) throw new Error(`Qdrant index: invalid shard count ${shards}`);
  return {
    vectors: dimensions === null ? {} : { [VECTORS.dense]: { size: dimensions, distance: "Cosine" } },
    sparse_vectors: { [VECTORS.sparse]: SPARSE_PARAMS },
    ...(shards > 1 ? { shard_number: shards } : {}),
    ...(replicationFactor > 1 ? { replication_factor: replicationFactor, write_consistency_factor: 1 } : {}),
  };
}

const KNOWN_INDEX = {
  string: "keyword",
  integer: "integer",
  boolean: "bool",
  instant: "datetime",
} as const satisfies Record<string, Schemas["PayloadSchemaType"]>;

/**
 * The payload indexes: the tenant key (Qdrant then keeps each tenant's points together), the
 * keys every request filters on, the derived lists, and the typed metadata fields (the filter
 * compiler relies on their stored type: ranges on `priority` and `created` are exact).
 * `version` and `chunk_index` have none: only writes filter on them, always beside a `doc_id`,
 * whose index leaves a handful of points to check; keeping both indexed cost the load a fifth
 * of its rate (679 against 854 docs/s, Qdrant 1.46 against 1.30 CPU s per 1,000 documents).
 * A collection made with them keeps them.
 */
export function payloadIndexRequests(): Schemas["CreateFieldIndex"][] {
  const typed = Object.entries(KNOWN_FIELD_TYPES).map(([field, type]) => ({
    field_name: metadataKey(field),
    field_schema: KNOWN_INDEX[type],
  }));
  return [
    { field_name: KEY.collection, field_schema: { type: "keyword", is_tenant: true } },
    { field_name: KEY.kind, field_schema: "keyword" },
    { field_name: KEY.docId, field_schema: "keyword" },
    { field_name: KEY.metaKeys, field_schema: "keyword" },
    { field_name: KEY.metaBlank, field_schema: "keyword" },
    { field_name: KEY.metaSame, field_schema: "keyword" },
    ...typed,
  ];
}

/** The dense vector size of an existing collection, to refuse one made for another embedder. */
export function denseSize(info: Schemas["CollectionInfo"]): number | undefined {
  const vectors = info.config.params.vectors;
  if (!vectors || typeof vectors !== "object" || !(VECTORS.dense in vectors)) return undefined;
  const params = (vectors as Record<string, Schemas["VectorParams"] | undefined>)[VECTORS.dense];
  return params?.size;
}

/** The full-scan threshold of an existing collection's sparse vector (undefined: Qdrant's default). */
export function sparseThreshold(info: Schemas["CollectionInfo"]): number | null | undefined {
  const params = info.config.params.sparse_vectors?.[VECTORS.sparse] as { index?: Schemas["SparseIndexParams"] | null } | undefined;
  return params?.index?.full_scan_threshold;
}
