/**
 * The payload keys of docstore's Qdrant points that filters read (the layout is described in
 * index/qdrant/schema.ts). The filter compiler (qdrant.ts) and the index adapter both use
 * these, so a filter always names the keys the adapter writes.
 */

export const KEY = {
  kind: "kind",
  collection: "collection",
  docId: "doc_id",
  version: "version",
  chunkIndex: "chunk_index",
  text: "text",
  textPoint: "text_point",
  metadata: "metadata",
  metaKeys: "meta_keys",
  metaBlank: "meta_blank",
  metaSame: "meta_same",
} as const;

export const metadataKey = (field: string) => `${KEY.metadata}.${field}`;

/** How a pair of different keys is written in `meta_same` (written once, in compare.ts). */
export { samePair } from "./compare.ts";
