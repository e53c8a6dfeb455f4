import { describe, expect, it } from "vitest";
import type { Schemas } from "@qdrant/js-client-rest";
import { RRF_K } from "../../search/fusion.ts";
import { QDRANT_RRF_K, rankers, rankingBatch, scopeFilter, scrollRequest, searchRequest, textRequest } from "./query.ts";

const sparse = { indices: [7, 42], values: [1, 1] };
const filter: Schemas["Filter"] = { must: [{ key: "kind", match: { value: "chunk" } }] };

describe("scope of a request", () => {
  it("adds the kind and the tenant key to the compiled filter", () => {
    const condition: Schemas["Condition"] = { key: "metadata.status", match: { value: "open" } };
    expect(scopeFilter("chunk", ["a", "b", "a"], condition)).toEqual({
      must: [{ key: "kind", match: { value: "chunk" } }, { key: "collection", match: { any: ["a", "b"] } }, condition],
    });
    expect(scopeFilter("document", ["a"], true)).toEqual({
      must: [{ key: "kind", match: { value: "document" } }, { key: "collection", match: { any: ["a"] } }],
    });
  });

  it("is null when nothing can match", () => {
    expect(scopeFilter("chunk", ["a"], false)).toBeNull();
    expect(scopeFilter("chunk", [], true)).toBeNull();
  });
});

describe("search requests", () => {
  it("rank by BM25 when the query has terms, by cosine when it has a vector", () => {
    expect(rankers(sparse, undefined)).toEqual([{ using: "bm25", query: sparse }]);
    expect(rankers({ indices: [], values: [] }, [0.5])).toEqual([{ using: "dense", query: [0.5] }]);
    expect(rankers(sparse, [0.5])).toEqual([{ using: "bm25", query: sparse }, { using: "dense", query: [0.5] }]);
    expect(rankers(undefined, undefined)).toEqual([]);
  });

  it("query one ranking directly", () => {
    const request: Schemas["QueryRequest"] = searchRequest(rankers(sparse, undefined), filter, 10, 100);
    expect(request).toEqual({ query: sparse, using: "bm25", filter, limit: 10, with_payload: true });
  });

  it("fuse two filtered prefetches with RRF in one request, with the constant of embed/fusion.ts", () => {
    const request: Schemas["QueryRequest"] = searchRequest(rankers(sparse, [0.1, 0.2]), filter, 10, 100);
    expect(request).toEqual({
      prefetch: [
        { query: sparse, using: "bm25", filter, limit: 100 },
        { query: [0.1, 0.2], using: "dense", filter, limit: 100 },
      ],
      query: { rrf: { k: 61 } },
      filter,
      limit: 10,
      with_payload: true,
    });
    // fusion.ts: 1 / (60 + rank) with ranks from 1; Qdrant: 1 / (k + rank) with ranks from 0.
    expect(QDRANT_RRF_K).toBe(RRF_K + 1);
    expect(() => searchRequest([], filter, 10, 100)).toThrow();
  });

  it("send each ranking on its own in a batch when the caller fuses", () => {
    const batch: Schemas["QueryRequestBatch"] = rankingBatch(rankers(sparse, [0.1]), filter, 256);
    expect(batch).toEqual({
      searches: [
        { query: sparse, using: "bm25", filter, limit: 256, with_payload: true },
        { query: [0.1], using: "dense", filter, limit: 256, with_payload: true },
      ],
    });
  });
});

describe("document reads", () => {
  it("scroll pages without the texts, from an offset", () => {
    const first: Schemas["ScrollRequest"] = scrollRequest(filter, null, 512);
    expect(first).toEqual({ filter, limit: 512, with_payload: { exclude: ["text"] }, with_vector: false });
    expect(scrollRequest(filter, "abc", 512, ["version"])).toEqual({ filter, limit: 512, with_payload: ["version"], with_vector: false, offset: "abc" });
  });

  it("read the texts of one page by id", () => {
    const request: Schemas["PointRequest"] = textRequest(["a", "b"]);
    expect(request).toEqual({ ids: ["a", "b"], with_payload: ["text"], with_vector: false });
  });
});
