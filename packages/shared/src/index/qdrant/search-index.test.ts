/**
 * The adapter's own logic, run against the in-memory stand-in of qdrant-fake.ts (not Qdrant:
 * contract.test.ts runs the same contract against a real one where QDRANT_URL or QDRANT_BIN
 * is set). Also checks that what it sends is what the request builders build.
 */
import { describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import type { Schemas } from "@qdrant/js-client-rest";
import { describeIndexContract } from "../../../test-support/index-contract.ts";
import { describeIndexModel, reopening } from "../../../test-support/index-model.ts";
import { parseFilter } from "../../filter/parse.ts";
import { UnavailableError } from "../../errors.ts";
import type { IndexedDocument } from "../../ports.ts";
import type { Metadata } from "../../domain/metadata.ts";
import { FakeQdrant } from "../../../test-support/qdrant-fake.ts";
import { QdrantSearchIndex } from "./search-index.ts";
import { compileFilter } from "../../filter/qdrant.ts";
import { rankers, scopeFilter, searchRequest } from "./query.ts";
import { DEFAULT_FUSION } from "../../search/fusion.ts";
import { queryVector } from "./sparse.ts";
import { createCollectionRequest } from "./schema.ts";

describeIndexContract("Qdrant adapter on an in-memory stand-in", async (options) => {
  const index = new QdrantSearchIndex({
    client: new FakeQdrant(),
    dimensions: 3,
    collectionName: `t-${randomUUID()}`,
    fusion: options?.fusion,
  });
  return { index, cleanup: () => index.close() };
});

describeIndexModel(
  "Qdrant adapter on an in-memory stand-in",
  async () => {
    const client = new FakeQdrant();
    return reopening(() => new QdrantSearchIndex({ client, dimensions: 3, collectionName: "model" }));
  },
  15,
);

function setup(options: { scrollPage?: number; fake?: FakeQdrant; dimensions?: number } = {}) {
  const fake = options.fake ?? new FakeQdrant();
  const index = new QdrantSearchIndex({
    client: fake,
    dimensions: options.dimensions ?? 3,
    collectionName: "docs",
    scrollPage: options.scrollPage,
  });
  return { fake, index };
}

const doc = (docId: string, text: string, metadata: Metadata = {}, version = 1): IndexedDocument => ({
  collection: "c",
  docId,
  version,
  metadata,
  text,
});
const item = (d: IndexedDocument, vector?: number[]) => ({
  doc: d,
  chunks: [{ index: 0, text: d.text, start: 0, end: d.text.length, vector }],
});
const callsOf = (fake: FakeQdrant, method: string) => fake.calls.filter((c) => c.method === method).map((c) => c.args);

describe("QdrantSearchIndex", () => {
  it("creates the collection and the missing payload indexes once", async () => {
    const fake = new FakeQdrant();
    await fake.createCollection("docs", createCollectionRequest(3));
    await fake.createPayloadIndex("docs", { field_name: "collection", field_schema: { type: "keyword", is_tenant: true } });
    const { index } = setup({ fake });
    await index.findDocuments({ collections: ["c"], filter: parseFilter(""), limit: 10, offset: 0 });
    await index.search({ query: "x", collections: ["c"], filter: parseFilter(""), k: 1 });
    const created = callsOf(fake, "createPayloadIndex").map((a) => (a as { field_name: string }).field_name);
    expect(created.filter((f) => f === "collection")).toHaveLength(1);
    expect(created).toContain("meta_same");
    expect(new Set(created).size).toBe(created.length);
    expect(callsOf(fake, "createCollection")).toHaveLength(1);
  });

  it("sets the sparse full-scan threshold on a collection made without it, once", async () => {
    const fake = new FakeQdrant();
    await fake.createCollection("docs", { vectors: {}, sparse_vectors: { bm25: { modifier: "idf" } } });
    for (let opened = 0; opened < 2; opened++) {
      const { index } = setup({ fake });
      await index.findDocuments({ collections: ["c"], filter: parseFilter(""), limit: 10, offset: 0 });
    }
    expect(callsOf(fake, "updateCollection")).toEqual([{ sparse_vectors: { bm25: { index: { full_scan_threshold: 1000 } } } }]);
    const info = await fake.getCollection("docs");
    expect(info.config.params.sparse_vectors).toEqual({ bm25: { modifier: "idf", index: { full_scan_threshold: 1000 } } });
    expect(callsOf(fake, "createCollection")).toHaveLength(1);
  });

  it("sends the search request the builders make", async () => {
    const { fake, index } = setup();
    await index.indexDocuments([item(doc("d1", "the heron", { status: "open" }), [1, 0, 0])]);
    const filter = parseFilter("status=open");
    await index.search({ query: "the heron", vector: [1, 0, 0], collections: ["c"], filter, k: 5 });
    const scope = scopeFilter("chunk", ["c"], compileFilter(filter).condition)!;
    const expected: Schemas["QueryRequest"] = searchRequest(
      rankers(queryVector(["heron"]), [1, 0, 0], DEFAULT_FUSION),
      scope,
      5,
      DEFAULT_FUSION.depth,
    );
    expect(callsOf(fake, "query")).toEqual([expected]);
  });

  it("post-filters a filter Qdrant cannot apply exactly, fetching deeper until k pass", async () => {
    const { fake, index } = setup();
    const losers = Array.from({ length: 150 }, (_, i) => item(doc(`x${i}`, "kestrel kestrel kestrel", { note: "other" })));
    const winners = ["w1 kestrel", "w2 kestrel bird", "w3 kestrel bird bird"].map((t) => item(doc(t.slice(0, 2), t, { note: "Keep" })));
    await index.indexDocuments([...losers, ...winners]);
    const hits = await index.search({ query: "kestrel", collections: ["c"], filter: parseFilter("noteLIKEkeep"), k: 2 });
    expect(hits.map((h) => h.docId)).toEqual(["w1", "w2"]);
    expect(callsOf(fake, "queryBatch").map((a) => (a as Schemas["QueryRequestBatch"]).searches[0]!.limit)).toEqual([64, 256]);
  });

  it("ranks a hybrid search under an inexact filter as under the equivalent exact one", async () => {
    const { index } = setup();
    const texts = ["alpha beta", "beta gamma", "gamma delta", "alpha", "beta", "delta alpha", "gamma"];
    await index.indexDocuments(
      texts.map((t, i) =>
        item(doc(`d${i}`, t, i % 3 === 0 ? { status: "skip", note: "no" } : { status: "keep", note: "keep it" }), [i, 1, (i * 7) % 3]),
      ),
    );
    const search = (filter: string) =>
      index.search({ query: "alpha gamma", vector: [1, 2, 0], collections: ["c"], filter: parseFilter(filter), k: 4 });
    const exact = await search("status=keep");
    const loose = await search("noteLIKEkeep");
    expect(exact.length).toBe(4);
    expect(loose.map((h) => [h.docId, h.score])).toEqual(exact.map((h) => [h.docId, h.score]));
  });

  it("shows one version of a document in every answer while a new one is written", async () => {
    const { fake, index } = setup();
    await index.indexDocuments([item(doc("d1", "osprey", {}, 1)), item(doc("d2", "osprey nest", {}, 1))]);
    const batchUpdate = fake.batchUpdate;
    const seen: string[][] = [];
    fake.batchUpdate = async (name, args) => {
      // The new version's chunks are written, its document point and the removal not yet.
      for (const query of ["osprey falcon", "osprey"]) {
        seen.push((await index.search({ query, collections: ["c"], filter: parseFilter(""), k: 2 })).map((h) => `${h.docId}:${h.text}`));
      }
      const docs = await index.findDocuments({ collections: ["c"], filter: parseFilter(""), limit: 10, offset: 0 });
      seen.push(docs.map((d) => `${d.docId}:v${d.version}`));
      return batchUpdate(name, args);
    };
    // Two chunks, written before the commit (a document of one whole chunk is written in it).
    const v2 = doc("d1", "falcon hawk", {}, 2);
    const chunks = [
      { index: 0, text: "falcon", start: 0, end: 6 },
      { index: 1, text: "hawk", start: 7, end: 11 },
    ];
    expect(await index.indexDocuments([{ doc: v2, chunks }])).toEqual([true]);
    // Both versions' chunks match "osprey falcon": the highest alone is shown, and the answer
    // still has k results. A query only the old version matches finds it (never missing).
    expect(seen).toEqual([
      ["d1:falcon", "d2:osprey nest"],
      ["d1:osprey", "d2:osprey nest"],
      ["d1:v1", "d2:v1"],
    ]);
    const after = await index.search({ query: "osprey falcon", collections: ["c"], filter: parseFilter(""), k: 10 });
    expect(after.map((h) => h.text)).toEqual(["falcon", "osprey nest"]);
    const d1 = [...fake.collections.get("docs")!.points.values()].filter((p) => p.payload.doc_id === "d1");
    expect(d1.map((p) => p.payload.version)).toEqual([2, 2, 2]);
  });

  it("writes a batch in three requests, whatever its size, and one-point documents in two", async () => {
    const { fake, index } = setup();
    await index.indexDocuments(Array.from({ length: 3 }, (_, i) => item(doc(`d${i}`, "first"))));
    fake.calls.length = 0;
    const twoChunks = (d: IndexedDocument) => ({
      doc: d,
      chunks: [
        { index: 0, text: "sec", start: 0, end: 3 },
        { index: 1, text: "ond", start: 3, end: 6 },
      ],
    });
    await index.indexDocuments(Array.from({ length: 200 }, (_, i) => (i % 2 ? twoChunks : item)(doc(`d${i}`, "second", {}, 2))));
    expect(fake.calls.map((c) => c.method)).toEqual(["upsert", "batchUpdate", "scroll"]);
    fake.calls.length = 0;
    await index.indexDocuments(Array.from({ length: 200 }, (_, i) => item(doc(`d${i}`, "third", {}, 3))));
    expect(fake.calls.map((c) => c.method)).toEqual(["batchUpdate", "scroll"]);
    expect(await index.search({ query: "first", collections: ["c"], filter: parseFilter(""), k: 5 })).toEqual([]);
    expect(await index.search({ query: "second", collections: ["c"], filter: parseFilter(""), k: 5 })).toEqual([]);
    expect((await index.search({ query: "third", collections: ["c"], filter: parseFilter(""), k: 500 })).length).toBe(200);
  });

  it("withdraws a version that another writer superseded during its commit", async () => {
    const fake = new FakeQdrant();
    const { index } = setup({ fake });
    const other = setup({ fake }).index;
    const batchUpdate = fake.batchUpdate;
    let raced = false;
    fake.batchUpdate = async (name, args) => {
      if (!raced) {
        raced = true;
        await other.indexDocuments([item(doc("d1", "version three", {}, 3))]);
      }
      return batchUpdate(name, args);
    };
    expect(await index.indexDocuments([item(doc("d1", "version two", {}, 2))])).toEqual([false]);
    const found = await index.findDocuments({ collections: ["c"], filter: parseFilter(""), limit: 10, offset: 0 });
    expect(found.map((d) => [d.version, d.text])).toEqual([[3, "version three"]]);
    expect([...fake.collections.get("docs")!.points.values()].every((p) => p.payload.version === 3)).toBe(true);
  });

  it("drops chunks an earlier attempt of the same version left beyond the new count", async () => {
    const { fake, index } = setup();
    const d = doc("d1", "one two three");
    await index.indexDocuments([{ doc: d, chunks: ["one", "two", "three"].map((t, i) => ({ index: i, text: t, start: 0, end: 1 })) }]);
    await index.indexDocuments([{ doc: d, chunks: [{ index: 0, text: "one", start: 0, end: 1 }] }]);
    expect([...fake.collections.get("docs")!.points.values()].map((p) => p.payload.kind).sort()).toEqual(["chunk", "document"]);
  });

  it("refuses vectors of another size than the collection's, even one made with another setting", async () => {
    const fake = new FakeQdrant();
    await setup({ fake, dimensions: 3 }).index.indexDocuments([item(doc("a", "x"), [1, 0, 0])]);
    const reconfigured = setup({ fake, dimensions: 5 }).index;
    await expect(reconfigured.indexDocuments([item(doc("b", "y"), [1, 0, 0, 0, 0])])).rejects.toThrow(
      /holds 3-dimensional vectors but the embedder gives 5/,
    );
    await expect(
      reconfigured.search({ query: "x", vector: [1, 0, 0, 0, 0], collections: ["c"], filter: parseFilter(""), k: 1 }),
    ).rejects.toThrow(/3-dimensional/);
    expect(await reconfigured.indexDocuments([item(doc("b", "y"), [0, 1, 0])])).toEqual([true]);
  });

  it("reads every page of a scroll and orders documents as the reference ordering", async () => {
    const { fake, index } = setup({ scrollPage: 2 });
    const priorities = { a: 0, b: 1, c: 0, d: 1, e: 2 };
    await index.indexDocuments(Object.entries(priorities).map(([id, priority]) => item(doc(id, `text ${id}`, { priority }))));
    const all = await index.findDocuments({ collections: ["c"], filter: parseFilter("ORDERBYDESCpriority"), limit: 10, offset: 0 });
    expect(all.map((d) => d.docId)).toEqual(["e", "b", "d", "a", "c"]);
    expect(callsOf(fake, "scroll").length).toBeGreaterThanOrEqual(3);
    const page = await index.findDocuments({ collections: ["c"], filter: parseFilter("ORDERBYDESCpriority"), limit: 2, offset: 1 });
    expect(page.map((d) => [d.docId, d.text])).toEqual([
      ["b", "text b"],
      ["d", "text d"],
    ]);
  });

  it("shows one version of a document while two are briefly committed", async () => {
    const { fake, index } = setup();
    await index.indexDocuments([item(doc("d1", "old", {}, 1))]);
    const stale = [...fake.collections.get("docs")!.points.values()].map((p) => structuredClone(p));
    await index.indexDocuments([item(doc("d1", "new", {}, 2))]);
    for (const p of stale) fake.collections.get("docs")!.points.set(p.id, p);
    const found = await index.findDocuments({ collections: ["c"], filter: parseFilter(""), limit: 10, offset: 0 });
    expect(found.map((d) => [d.version, d.text])).toEqual([[2, "new"]]);
  });

  it("reports an unreachable Qdrant as unavailable (503)", async () => {
    const index = new QdrantSearchIndex({ url: "http://127.0.0.1:1", dimensions: 3 });
    await expect(index.ping()).rejects.toBeInstanceOf(UnavailableError);
    await expect(index.search({ query: "x", collections: ["c"], filter: parseFilter(""), k: 1 })).rejects.toMatchObject({
      kind: "unavailable",
    });
    await expect(index.indexDocuments([item(doc("d", "x"))])).rejects.toBeInstanceOf(UnavailableError);
  });
});
