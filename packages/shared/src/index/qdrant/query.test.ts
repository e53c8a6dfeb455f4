import { describe, expect, it } from "vitest";
import type { Schemas } from "@qdrant/js-client-rest";
import { DEFAULT_FUSION, RRF_K } from "../../search/fusion.ts";
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
      must: [
        { key: "kind", match: { value: "document" } },
        { key: "collection", match: { any: ["a"] } },
      ],
    });
  });

  it("is null when nothing can match", () => {
    expect(scopeFilter("chunk", ["a"], false)).toBeNull();
    expect(scopeFilter("chunk", [], true)).toBeNull();
  });
});

/** Both rankings weighted alike: Qdrant's plain RRF. */
const EVEN = { depth: 100, lexicalWeight: 1, denseWeight: 1 };

describe("search requests", () => {
  it("rank by BM25 when the query has terms, by cosine when it has a vector, each with its weight", () => {
    expect(rankers(sparse, undefined, EVEN)).toEqual([{ using: "bm25", query: sparse, weight: 1 }]);
    expect(rankers({ indices: [], values: [] }, [0.5], EVEN)).toEqual([{ using: "dense", query: [0.5], weight: 1 }]);
    expect(rankers(sparse, [0.5], EVEN)).toEqual([
      { using: "bm25", query: sparse, weight: 1 },
      { using: "dense", query: [0.5], weight: 1 },
    ]);
    expect(rankers(sparse, [0.5], { depth: 100, lexicalWeight: 0.5, denseWeight: 2 }).map((r) => r.weight)).toEqual([0.5, 2]);
    expect(rankers(undefined, undefined)).toEqual([]);
    expect(rankers(sparse, [0.5]).map((r) => r.weight)).toEqual([DEFAULT_FUSION.lexicalWeight, DEFAULT_FUSION.denseWeight]);
  });

  it("query one ranking directly", () => {
    const request: Schemas["QueryRequest"] = searchRequest(
      rankers(sparse, undefined, { depth: 100, lexicalWeight: 3, denseWeight: 1 }),
      filter,
      10,
      100,
    );
    expect(request).toEqual({ query: sparse, using: "bm25", filter, limit: 10, with_payload: true });
  });

  it("send the rankings' weights for a weighted fusion", () => {
    const request: Schemas["QueryRequest"] = searchRequest(
      rankers(sparse, [0.1, 0.2], { depth: 100, lexicalWeight: 1, denseWeight: 1.5 }),
      filter,
      10,
      100,
    );
    expect(request.query).toEqual({ rrf: { k: 61, weights: [1, 1.5] } });
  });

  it("fuse two filtered prefetches with RRF in one request, with the constant of search/fusion.ts", () => {
    const request: Schemas["QueryRequest"] = searchRequest(rankers(sparse, [0.1, 0.2], EVEN), filter, 10, 100);
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
    // fusion.ts: 1 / (rank / w + 60) with ranks from 1; Qdrant: 1 / (rank / w + k - 1), also from 1.
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
    expect(scrollRequest(filter, "abc", 512, ["version"])).toEqual({
      filter,
      limit: 512,
      with_payload: ["version"],
      with_vector: false,
      offset: "abc",
    });
  });

  it("read the texts of one page by id", () => {
    const request: Schemas["PointRequest"] = textRequest(["a", "b"]);
    expect(request).toEqual({ ids: ["a", "b"], with_payload: ["text"], with_vector: false });
  });
});
