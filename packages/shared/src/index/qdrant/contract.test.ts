/**
 * The index contract against a real Qdrant: the one QDRANT_URL names, or one started from
 * QDRANT_BIN (test-support/qdrant-server.ts). With neither, the suite says so (one skipped
 * test whose title gives the reason), never a silent pass.
 */
import { describe, expect, it } from "vitest";
import { DimensionMismatchError } from "../../errors.ts";
import { parseFilter } from "../../filter/parse.ts";
import { describeIndexContract } from "../../../test-support/index-contract.ts";
import { describeIndexModel, reopening } from "../../../test-support/index-model.ts";
import { onRealQdrant, uniqueQdrantCollection } from "../../../test-support/qdrant-server.ts";
import { createQdrantClient } from "./client.ts";
import { QdrantSearchIndex } from "./search-index.ts";
import { chunkPayload, documentPayload, pointId } from "./points.ts";
import { documentVector } from "./sparse.ts";

const SUITE = "Qdrant (real server)";

onRealQdrant(`SearchIndex contract: ${SUITE}`, (server) => {
  describeIndexContract(SUITE, async (options) => {
    // One Qdrant collection per test, so tests never see each other's points or statistics.
    const url = server().url;
    const collectionName = uniqueQdrantCollection("contract");
    const index = new QdrantSearchIndex({ url, dimensions: 3, collectionName, fusion: options?.fusion });
    return {
      index,
      async cleanup() {
        await index.close();
        await createQdrantClient({ url }).deleteCollection(collectionName);
      },
    };
  });

  // The model's documents have no vectors: the collection is made as without an embedder, in
  // two shards, so that every answer is checked across shards too.
  describeIndexModel(
    SUITE,
    async () => {
      const url = server().url;
      const collectionName = uniqueQdrantCollection("model");
      return reopening(() => new QdrantSearchIndex({ url, dimensions: null, shards: 2, collectionName }), {
        cleanup: () => createQdrantClient({ url }).deleteCollection(collectionName),
      });
    },
    15,
  );

  describe(`${SUITE}: the collection as configured`, () => {
    const doc = (docId: string, text: string) => ({
      doc: { collection: "c", docId, version: 1, metadata: {}, text },
      chunks: [{ index: 0, text, start: 0, end: text.length }],
    });

    it("stores no dense vector without an embedder, and places the collection in QDRANT_SHARDS shards", async () => {
      const url = server().url;
      const collectionName = uniqueQdrantCollection("layout");
      const index = new QdrantSearchIndex({ url, dimensions: null, shards: 3, collectionName });
      try {
        expect(await index.indexDocuments([doc("a", "alpine meadow"), doc("b", "meadow flowers")])).toEqual([true, true]);
        const info = await createQdrantClient({ url }).getCollection(collectionName);
        expect(info.config.params.vectors).toEqual({});
        expect(info.config.params.shard_number).toBe(3);
        expect(info.config.params.sparse_vectors).toEqual({ bm25: { modifier: "idf", index: { full_scan_threshold: 1000 } } });
        const hits = await index.search({ collections: ["c"], query: "meadow", k: 5, filter: parseFilter("", new Date()) });
        expect(hits.map((h) => h.docId).sort()).toEqual(["a", "b"]);
        // An embedder configured later finds no room for its vectors: said, not stored half-way.
        const withVector = {
          ...doc("c", "alpine lake"),
          chunks: [{ index: 0, text: "alpine lake", start: 0, end: 11, vector: [1, 0, 0] }],
        };
        await expect(index.indexDocuments([withVector])).rejects.toThrow(DimensionMismatchError);
        await expect(index.indexDocuments([withVector])).rejects.toThrow(/made without dense vectors/);
      } finally {
        await index.close();
        await createQdrantClient({ url }).deleteCollection(collectionName);
      }
    });

    it("gives a collection made before the sparse full-scan threshold its threshold, keeping its points", async () => {
      const url = server().url;
      const client = createQdrantClient({ url });
      const collectionName = uniqueQdrantCollection("threshold");
      await client.createCollection(collectionName, { vectors: {}, sparse_vectors: { bm25: { modifier: "idf" } } });
      const first = new QdrantSearchIndex({ url, dimensions: null, collectionName });
      try {
        await first.indexDocuments([doc("a", "alpine meadow")]);
        const params = async () => (await client.getCollection(collectionName)).config.params.sparse_vectors;
        expect(await params()).toEqual({ bm25: { modifier: "idf", index: { full_scan_threshold: 1000 } } });
        const again = new QdrantSearchIndex({ url, dimensions: null, collectionName });
        const hits = await again.search({ collections: ["c"], query: "meadow", k: 5, filter: parseFilter("", new Date()) });
        expect(hits.map((h) => h.docId)).toEqual(["a"]);
      } finally {
        await first.close();
        await client.deleteCollection(collectionName);
      }
    });

    it("reads and replaces documents written when a one-chunk document was two points", async () => {
      const url = server().url;
      const client = createQdrantClient({ url });
      const collectionName = uniqueQdrantCollection("two-points");
      const index = new QdrantSearchIndex({ url, dimensions: null, collectionName });
      try {
        await index.ping();
        await index.findDocuments({ collections: ["c"], filter: parseFilter(""), limit: 1, offset: 0 }); // creates the collection
        // The layout before: the chunk point holds the text, the document point names it in `text_point`.
        const old = (docId: string, text: string, priority: number) => {
          const d = { collection: "c", docId, version: 1, metadata: { priority }, text };
          const chunk = { index: 0, text, start: 0, end: text.length };
          const chunkId = pointId("c", docId, 1, 0);
          const { text: _, ...head } = documentPayload(d);
          return [
            { id: chunkId, vector: { bm25: documentVector(text) }, payload: chunkPayload(d, chunk) },
            { id: pointId("c", docId, 1, "document"), vector: {}, payload: { ...head, text_point: chunkId } },
          ];
        };
        const points = [...old("a", "alpine meadow", 2), ...old("b", "meadow flowers", 1)];
        await client.upsert(collectionName, { wait: true, points });
        const filter = (f: string) => parseFilter(f, new Date());
        const hits = await index.search({ collections: ["c"], query: "meadow", k: 5, filter: filter("") });
        expect(hits.map((h) => h.text).sort()).toEqual(["alpine meadow", "meadow flowers"]);
        const a = ["a", "alpine meadow", { priority: 2 }];
        const b = ["b", "meadow flowers", { priority: 1 }];
        for (const [f, order] of [
          ["ORDERBYDESCpriority", [a, b]],
          ["priority>0^ORDERBYpriority", [b, a]],
          ["", [a, b]],
        ] as const) {
          const found = await index.findDocuments({ collections: ["c"], filter: filter(f), limit: 5, offset: 0 });
          expect(found.map((d) => [d.docId, d.text, d.metadata])).toEqual(order);
        }
        expect(await index.documentChunks("c", "a")).toEqual({
          version: 1,
          chunks: [{ chunkIndex: 0, text: "alpine meadow", start: 0, end: 13 }],
        });
        // The same version written again (a retried job) and a new version: one point each, nothing doubled.
        const b2 = doc("b", "meadow grass");
        await index.indexDocuments([doc("a", "alpine meadow"), { ...b2, doc: { ...b2.doc, version: 2 } }]);
        const left = await client.scroll(collectionName, { limit: 10, with_payload: ["doc_id", "version", "kind"], with_vector: false });
        expect(left.points.map((p) => [p.payload?.doc_id, p.payload?.version, p.payload?.kind]).sort()).toEqual([
          ["a", 1, ["chunk", "document"]],
          ["b", 2, ["chunk", "document"]],
        ]);
        const again = await index.search({ collections: ["c"], query: "meadow", k: 5, filter: filter("") });
        expect(again.map((h) => h.text).sort()).toEqual(["alpine meadow", "meadow grass"]);
      } finally {
        await index.close();
        await client.deleteCollection(collectionName);
      }
    });
  });
});
