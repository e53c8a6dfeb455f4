import { describe, expect, it } from "vitest";
import type { Schemas } from "@qdrant/js-client-rest";
import { KNOWN_FIELD_TYPES } from "../../domain/metadata.ts";
import { createCollectionRequest, denseSize, payloadIndexRequests } from "./schema.ts";

describe("collection layout", () => {
  it("creates named dense vectors of the embedder's size and a BM25 sparse vector with Qdrant's IDF", () => {
    const request: Schemas["CreateCollection"] = createCollectionRequest(1536);
    expect(request).toEqual({
      vectors: { dense: { size: 1536, distance: "Cosine" } },
      sparse_vectors: { bm25: { modifier: "idf", index: { full_scan_threshold: 1000 } } },
    });
    expect(createCollectionRequest(null)).toEqual({
      vectors: {},
      sparse_vectors: { bm25: { modifier: "idf", index: { full_scan_threshold: 1000 } } },
    });
    expect(createCollectionRequest(null, { shards: 4, replicationFactor: 2 })).toEqual({
      vectors: {},
      sparse_vectors: { bm25: { modifier: "idf", index: { full_scan_threshold: 1000 } } },
      shard_number: 4,
      replication_factor: 2,
      write_consistency_factor: 1,
    });
    expect(() => createCollectionRequest(null, { shards: 0 })).toThrow(/invalid shard count/);
    expect(() => createCollectionRequest(0)).toThrow(/invalid dense vector size/);
    expect(() => createCollectionRequest(1.5)).toThrow(/invalid dense vector size/);
  });

  it("indexes the tenant key, the keys every read filters on, the derived lists and the typed fields", () => {
    const requests: Schemas["CreateFieldIndex"][] = payloadIndexRequests();
    const expected: [string, Schemas["CreateFieldIndex"]["field_schema"]][] = [
      ["collection", { type: "keyword", is_tenant: true }],
      ["kind", "keyword"],
      ["doc_id", "keyword"],
      ["meta_keys", "keyword"],
      ["meta_blank", "keyword"],
      ["meta_same", "keyword"],
      ["metadata.sys_id", "keyword"],
      ["metadata.status", "keyword"],
      ["metadata.type", "keyword"],
      ["metadata.priority", "integer"],
      ["metadata.flag", "bool"],
      ["metadata.created", "datetime"],
    ];
    expect(requests).toEqual(expected.map(([field_name, field_schema]) => ({ field_name, field_schema })));
    expect(requests.filter((r) => r.field_name.startsWith("metadata.")).length).toBe(Object.keys(KNOWN_FIELD_TYPES).length);
  });

  it("reads the dense vector size of an existing collection", () => {
    const info = (vectors: unknown) => ({ config: { params: { vectors } } }) as Schemas["CollectionInfo"];
    expect(denseSize(info({ dense: { size: 3, distance: "Cosine" } }))).toBe(3);
    expect(denseSize(info({ size: 3, distance: "Cosine" }))).toBeUndefined();
    expect(denseSize(info(undefined))).toBeUndefined();
  });
});
