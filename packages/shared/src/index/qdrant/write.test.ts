import { describe, expect, it } from "vitest";
import type { Schemas } from "@qdrant/js-client-rest";
import { matchesFilter } from "../../../test-support/qdrant-interpret.ts";
import { chunkCount, collectionFilter, documentFilter, supersededFilter, upsertBatches, versionsFilter } from "./write.ts";

describe("write requests", () => {
  it("supersede, in one filter, older versions and extra chunks of each document of a batch", () => {
    const filter: Schemas["Filter"] = supersededFilter([
      { collection: "c", docId: "d", version: 3, chunks: 2 },
      { collection: "e", docId: "f", version: 1, chunks: 5 },
    ]);
    const of = (collection: string, docId: string, version: number, chunks: number) => ({
      must: [
        { key: "collection", match: { value: collection } },
        { key: "doc_id", match: { value: docId } },
        {
          should: [
            { key: "version", range: { lt: version } },
            {
              must: [
                { key: "version", match: { value: version } },
                { key: "chunk_index", range: { gte: chunks } },
              ],
            },
          ],
        },
      ],
    });
    expect(filter).toEqual({ should: [of("c", "d", 3, 2), of("e", "f", 1, 5)] });
  });

  it("supersede, beside a one-point document, the chunk points an earlier attempt of its version left", () => {
    const filter = supersededFilter([{ collection: "c", docId: "d", version: 3, chunks: 1, onePoint: true }]);
    const point = (kind: string | string[], version: number, chunkIndex?: number) => ({
      kind,
      collection: "c",
      doc_id: "d",
      version,
      ...(chunkIndex === undefined ? {} : { chunk_index: chunkIndex }),
    });
    const gone = (payload: Record<string, unknown>) => matchesFilter(filter, payload);
    expect(gone(point(["chunk", "document"], 3, 0))).toBe(false); // the point just written
    expect(gone(point("chunk", 3, 0))).toBe(true); // an attempt that wrote chunks and a document point
    expect(gone(point("chunk", 3, 1))).toBe(true);
    expect(gone(point(["chunk", "document"], 2, 0))).toBe(true);
    expect(gone(point("document", 2))).toBe(true);
    expect(gone(point(["chunk", "document"], 4, 0))).toBe(false);
    expect(gone({ ...point("chunk", 3, 0), doc_id: "e" })).toBe(false);
  });

  it("find the committed versions of a batch's documents", () => {
    const filter: Schemas["Filter"] = versionsFilter([
      { collection: "c", docId: "a" },
      { collection: "c", docId: "b" },
      { collection: "e", docId: "a" },
    ]);
    expect(filter).toEqual({
      must: [
        { key: "kind", match: { value: "document" } },
        { key: "collection", match: { any: ["c", "e"] } },
        { key: "doc_id", match: { any: ["a", "b"] } },
      ],
    });
  });

  it("select a document, one version of it, or a whole collection for deletion", () => {
    expect(documentFilter("c", "d")).toEqual({
      must: [
        { key: "collection", match: { value: "c" } },
        { key: "doc_id", match: { value: "d" } },
      ],
    });
    expect(documentFilter("c", "d", 0).must).toContainEqual({ key: "version", match: { value: 0 } });
    expect(collectionFilter("c")).toEqual({ must: [{ key: "collection", match: { value: "c" } }] });
  });

  it("split upserts into requests bounded in points and bytes, a big point alone", () => {
    const point = (id: number, text = ""): Schemas["PointStruct"] => ({ id, vector: {}, payload: { text } });
    const ids = (batches: Schemas["PointStruct"][][]) => batches.map((b) => b.map((p) => p.id));
    expect(
      ids(
        upsertBatches(
          [1, 2, 3, 4, 5].map((i) => point(i)),
          { points: 2, bytes: 1e6 },
        ),
      ),
    ).toEqual([[1, 2], [3, 4], [5]]);
    const big = "x".repeat(1000);
    expect(ids(upsertBatches([point(1), point(2, big), point(3), point(4)], { points: 10, bytes: 500 }))).toEqual([[1], [2], [3, 4]]);
    expect(upsertBatches([])).toEqual([]);
  });

  it("count chunks from their indexes", () => {
    expect(chunkCount([{ index: 0 }, { index: 2 }, { index: 1 }])).toBe(3);
    expect(chunkCount([])).toBe(0);
  });
});
