import { describe, expect, it } from "vitest";
import type { Schemas } from "@qdrant/js-client-rest";
import { KNOWN_FIELD_TYPES } from "../../domain/metadata.ts";
import { createCollectionRequest, denseSize, payloadIndexRequests } from "./schema.ts";

describe("collection layout", () => {
  it("creates named dense vectors of the embedder's size and a BM25 sparse vector with Qdrant's IDF", () => {
    const request: Schemas["CreateCollection"] = createCollectionRequest(1536);
    expect(request).toEqual({
      vectors: { dense: { size: 1536, distance: "Cosine" } },
      sparse_vectors: { bm25: { modifier: "idf" } },
    });
    expect(createCollectionRequest(null)).toEqual({ vectors: {}, sparse_vectors: { bm25: { modifier: "idf" } } });
    expect(createCollectionRequest(null, { shards: 4, replicationFactor: 2 })).toEqual({
      vectors: {},
      sparse_vectors: { bm25: { modifier: "idf" } },
      shard_number: 4,
      replication_factor: 2,
      write_consistency_factor: 1,
    });
    expect(() => createCollectionRequest(null, { shards: 0 })).toThrow(/invalid shard count/);
    expect(() => createCollectionRequest(0)).toThrow(/invalid dense vector size/);
    expect(() => createCollectionRequest(1.5)).toThrow(/invalid dense vector size/);
  });

  it("indexes the tenant key, the keys every request filters on, the derived lists and the typed fields", () => {
    const requests: Schemas["CreateFieldIndex"][] = payloadIndexRequests();
    expect(requests).toEqual([
      { field_name: "collection", field_schema: { type: "keyword", is_tenant: true } },
      { field_name: "kind", field_schema: "keyword" },
      { field_name: "doc_id", field_schema: "keyword" },
      { field_name: "version", field_schema: "integer" },
      { field_name: "chunk_index", field_schema: "integer" },
      { field_name: "meta_keys", field_schema: "keyword" },
      { field_name: "meta_blank", field_schema: "keyword" },
      { field_name: "meta_same", field_schema: "keyword" },
      { field_name: "metadata.sys_id", field_schema: "keyword" },
      { field_name: "metadata.status", field_schema: "keyword" },
      { field_name: "metadata.type", field_schema: "keyword" },
      { field_name: "metadata.priority", field_schema: "integer" },
      { field_name: "metadata.flag", field_schema: "bool" },
      { field_name: "metadata.created", field_schema: "datetime" },
    ]);
    expect(requests.filter((r) => r.field_name.startsWith("metadata.")).length).toBe(Object.keys(KNOWN_FIELD_TYPES).length);
  });

  it("reads the dense vector size of an existing collection", () => {
    const info = (vectors: unknown) => ({ config: { params: { vectors } } }) as Schemas["CollectionInfo"];
    expect(denseSize(info({ dense: { size: 3, distance: "Cosine" } }))).toBe(3);
    expect(denseSize(info({ size: 3, distance: "Cosine" }))).toBeUndefined();
    expect(denseSize(info(undefined))).toBeUndefined();
  });
});
