/**
 * The contract every SearchIndex adapter must meet, written once. Each adapter's test file
 * calls `describeIndexContract` with a factory; the filter cases are checked against the
 * reference evaluator, so every backend gives the same answers.
 */
import { describe, expect, it, beforeEach, afterEach } from "vitest";
import { randomUUID } from "node:crypto";
import type { IndexedDocument, SearchIndex } from "../src/ports.ts";
import type { Metadata } from "../src/domain/metadata.ts";
import { evaluate } from "../src/filter/evaluate.ts";
import { parseFilter } from "../src/filter/parse.ts";
import type { HybridFusion } from "../src/search/fusion.ts";

export interface IndexFixture {
  index: SearchIndex;
  cleanup(): Promise<void>;
}

const doc = (collection: string, docId: string, text: string, metadata: Metadata = {}, version = 1): IndexedDocument => ({
  collection,
  docId,
  version,
  metadata,
  text,
});

const one = (d: IndexedDocument) => [{ doc: d, chunks: [{ index: 0, text: d.text, start: 0, end: d.text.length }] }];

/** Metadata varied enough to tell the operators apart. */
const CORPUS: Metadata[] = [
  { status: "open", priority: 1, type: "memo", flag: true, created: "2024-05-02T10:00:00Z", tags: ["a", "b"], note: "Alpha report" },
  { status: "closed", priority: 2, type: "report", flag: false, created: "2024-05-31T23:59:59Z", tags: ["b"], note: "beta" },
  { status: "pending", priority: 3, type: "sql server", created: "2024-06-01T00:00:00Z", score: 10, note: "" },
  { status: "open", priority: 4, type: "db2", flag: true, score: 9.5, prev_status: "open" },
  { status: "Open", priority: 5, note: "gamma REPORT", score: "n/a", prev_status: "closed" },
  { priority: 2, tags: [], created: "2023-12-31T12:00:00Z" },
  {},
];

const FILTERS = [
  "", "status=open", "status!=open", "status=", "priority=2", "priority>2", "priority<=2", "priorityIN1,3,5",
  "priorityNOT IN1,3,5", "typeINdb2,sql server", "noteLIKEreport", "noteNOT LIKEreport", "noteSTARTSWITHalp",
  "noteENDSWITHport", "priorityBETWEEN2@4", "createdBETWEEN2024-05-01@2024-05-31", "created>2024-05-31",
  "noteISEMPTY", "noteISNOTEMPTY", "flag=true", "flag=false", "flag!=true", "tags=b", "tags!=b", "tagsISEMPTY",
  "score>9", "score<=9.5", "statusSAMEASprev_status", "statusNSAMEASprev_status", "statusANYTHING",
  "status=open^priority>1", "status=open^ORstatus=pending^priority<4", "status=closed^NQflag=true",
  "typeLIKEreport^statusNOT INclosed,archived^ORDERBYDESCcreated", "status=open^ORDERBYpriority^EQ",
];

/** What a test may ask of the index it gets; the factory passes it to the adapter. */
export interface IndexFixtureOptions {
  fusion?: HybridFusion;
}

export function describeIndexContract(name: string, make: (options?: IndexFixtureOptions) => Promise<IndexFixture>): void {
  describe(`SearchIndex contract: ${name}`, () => {
    let fx: IndexFixture;
    let c: string;
    beforeEach(async () => {
      fx = await make();
      c = `c-${randomUUID().slice(0, 8)}`;
    });
    afterEach(async () => {
      await fx.cleanup();
    });

    it("finds a chunk with its document's fields, best first", async () => {
      const { index } = fx;
      await index.indexDocuments([
        ...one(doc(c, "d1", "The heron waded through the marsh", { status: "open" })),
        ...one(doc(c, "d2", "Heron heron heron: a study of herons", { status: "closed" })),
        ...one(doc(c, "d3", "Nothing to see here")),
      ]);
      const hits = await index.search({ query: "heron", collections: [c], filter: parseFilter(""), k: 10 });
      expect(hits.map((h) => h.docId)).toEqual(["d2", "d1"]);
      expect(hits[0]).toMatchObject({ collection: c, chunkIndex: 0, start: 0, metadata: { status: "closed" } });
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
      expect(await index.search({ query: "?!", collections: [c], filter: parseFilter(""), k: 10 })).toEqual([]);
    });

    it("searches only the requested collections, as one list", async () => {
      const { index } = fx;
      const other = `${c}-other`;
      await index.indexDocuments([...one(doc(c, "d1", "shared words here")), ...one(doc(other, "d1", "shared words there"))]);
      expect((await index.search({ query: "shared", collections: [c], filter: parseFilter(""), k: 10 })).map((h) => h.collection)).toEqual([c]);
      const both = await index.search({ query: "shared words", collections: [c, other], filter: parseFilter(""), k: 10 });
      expect(new Set(both.map((h) => h.collection))).toEqual(new Set([c, other]));
      await index.deleteCollection(other);
    });

    it("filters before ranking, not after", async () => {
      const { index } = fx;
      const items = Array.from({ length: 20 }, (_, i) =>
        one(doc(c, `d${i}`, `kestrel ${"kestrel ".repeat(20 - i)}`, { priority: i })),
      ).flat();
      await index.indexDocuments(items);
      const hits = await index.search({ query: "kestrel", collections: [c], filter: parseFilter("priority>=18"), k: 1 });
      expect(hits.map((h) => h.docId)).toEqual(["d18"]);
    });

    it("replaces a document whole and never lets an older version win", async () => {
      const { index } = fx;
      await index.indexDocuments(one(doc(c, "d1", "version one osprey", {}, 1)));
      expect(await index.indexDocuments(one(doc(c, "d1", "version two falcon", {}, 2)))).toEqual([true]);
      expect(await index.indexDocuments(one(doc(c, "d1", "stale version osprey", {}, 1)))).toEqual([false]);
      expect(await index.search({ query: "osprey", collections: [c], filter: parseFilter(""), k: 10 })).toEqual([]);
      const hits = await index.search({ query: "falcon", collections: [c], filter: parseFilter(""), k: 10 });
      expect(hits.map((h) => h.text)).toEqual(["version two falcon"]);
    });

    it("deletes a document, and only the given version when asked", async () => {
      const { index } = fx;
      await index.indexDocuments(one(doc(c, "d1", "plover", {}, 3)));
      await index.deleteDocument(c, "d1", 2);
      expect(await index.search({ query: "plover", collections: [c], filter: parseFilter(""), k: 10 })).toHaveLength(1);
      await index.deleteDocument(c, "d1");
      expect(await index.search({ query: "plover", collections: [c], filter: parseFilter(""), k: 10 })).toEqual([]);
      expect(await index.findDocuments({ collections: [c], filter: parseFilter(""), limit: 10, offset: 0 })).toEqual([]);
    });

    it("keeps several chunks of a document with their offsets", async () => {
      const { index } = fx;
      const text = "first part about cranes. second part about storks.";
      await index.indexDocuments([{
        doc: doc(c, "d1", text),
        chunks: [
          { index: 0, text: text.slice(0, 24), start: 0, end: 24 },
          { index: 1, text: text.slice(25), start: 25, end: text.length },
        ],
      }]);
      const hits = await index.search({ query: "storks", collections: [c], filter: parseFilter(""), k: 10 });
      expect(hits).toHaveLength(1);
      expect(hits[0]).toMatchObject({ chunkIndex: 1, start: 25, end: text.length, text: "second part about storks." });
    });

    it("agrees with the reference evaluator on every operator", async () => {
      const { index } = fx;
      await index.indexDocuments(CORPUS.flatMap((m, i) => one(doc(c, `d${i}`, `bird number ${i}`, m))));
      for (const text of FILTERS) {
        const filter = parseFilter(text);
        const expected = CORPUS.flatMap((m, i) => (evaluate(filter, m) ? [`d${i}`] : [])).sort();
        const found = await index.findDocuments({ collections: [c], filter, limit: 100, offset: 0 });
        expect(found.map((d) => d.docId).sort(), text).toEqual(expected);
        const searched = await index.search({ query: "bird", collections: [c], filter, k: 100 });
        expect(searched.map((h) => h.docId).sort(), text).toEqual(expected);
      }
    });

    it("with vectors, ranks by meaning too (BM25 and cosine fused)", async () => {
      const { index } = fx;
      const withVector = (id: string, text: string, vector: number[]) => ({
        doc: doc(c, id, text),
        chunks: [{ index: 0, text, start: 0, end: text.length, vector }],
      });
      await index.indexDocuments([withVector("a", "alpha report", [1, 0, 0]), withVector("b", "beta memo", [0, 1, 0])]);
      const semantic = await index.search({ query: "gamma", vector: [0, 0.9, 0.1], collections: [c], filter: parseFilter(""), k: 10 });
      expect(semantic[0]?.docId).toBe("b");
      const both = await index.search({ query: "alpha", vector: [0, 1, 0], collections: [c], filter: parseFilter(""), k: 10 });
      expect(new Set(both.map((h) => h.docId))).toEqual(new Set(["a", "b"]));
      const filtered = await index.search({ query: "gamma", vector: [0, 1, 0], collections: [c], filter: parseFilter("status=open"), k: 10 });
      expect(filtered).toEqual([]);
      await expect(index.indexDocuments([withVector("c", "other", [1, 0])])).rejects.toThrow(/dimensional/);
    });

    it("fuses the two rankings with the weights and candidate depth it was given", async () => {
      // BM25 ranks a before b; cosine ranks b before a.
      const top = async (fusion: HybridFusion) => {
        const own = await make({ fusion });
        try {
          const chunk = (id: string, text: string, vector: number[]) => ({ doc: doc(c, id, text), chunks: [{ index: 0, text, start: 0, end: text.length, vector }] });
          await own.index.indexDocuments([chunk("a", "alpha alpha alpha", [0.6, 0.8, 0]), chunk("b", "alpha beta gamma delta", [1, 0, 0])]);
          const hits = await own.index.search({ query: "alpha", vector: [1, 0, 0], collections: [c], filter: parseFilter(""), k: 1 });
          return hits.map((h) => h.docId);
        } finally {
          await own.cleanup();
        }
      };
      // One candidate from each ranking: the heavier ranking's first wins.
      expect(await top({ depth: 1, lexicalWeight: 3, denseWeight: 1 })).toEqual(["a"]);
      expect(await top({ depth: 1, lexicalWeight: 1, denseWeight: 3 })).toEqual(["b"]);
      // Two from each: a scores 1 / (1 + 60) + 1 / (2 / 3 + 60), b 1 / (2 + 60) + 1 / (1 / 3 + 60).
      expect(await top({ depth: 2, lexicalWeight: 1, denseWeight: 3 })).toEqual(["a"]);
    });

    it("refreshes a byte-identical re-load's metadata without touching its chunks", async () => {
      const { index } = fx;
      const v1 = { ...doc(c, "d1", "the pelican report", { status: "open" }), sha256: "aaa" };
      await index.indexDocuments([{ doc: v1, chunks: [{ index: 0, text: v1.text, start: 0, end: v1.text.length }] }]);
      expect(await index.refreshDocument({ ...v1, version: 2, sha256: "bbb", metadata: { status: "closed" } })).toBeNull();
      expect(await index.refreshDocument({ ...v1, version: 2, metadata: { status: "closed" } })).toBe(1);
      const hits = await index.search({ query: "pelican", collections: [c], filter: parseFilter("status=closed"), k: 5 });
      expect(hits.map((h) => [h.docId, h.metadata.status])).toEqual([["d1", "closed"]]);
      expect(await index.search({ query: "pelican", collections: [c], filter: parseFilter("status=open"), k: 5 })).toEqual([]);
      const [found] = await index.findDocuments({ collections: [c], filter: parseFilter(""), limit: 5, offset: 0 });
      expect(found).toMatchObject({ version: 2, metadata: { status: "closed" }, text: "the pelican report" });
      expect(await index.refreshDocument({ ...v1, version: 1 })).toBeNull();
      expect(await index.refreshDocument({ ...v1, collection: `${c}-none` })).toBeNull();
    });

    it("returns metadata as given, integers beyond 2^53 included", async () => {
      const { index } = fx;
      const metadata = { big: 2 ** 62 + 1024, low: -(2 ** 60), list: [2 ** 55, "x", 3], small: 3, half: 0.5 };
      await index.indexDocuments(one(doc(c, "d1", "numbers beyond doubles", metadata)));
      const [hit] = await index.search({ query: "numbers", collections: [c], filter: parseFilter(""), k: 5 });
      expect(hit?.metadata).toStrictEqual(metadata);
      const [found] = await index.findDocuments({ collections: [c], filter: parseFilter("big>4611686018427387904"), limit: 5, offset: 0 });
      expect(found?.metadata).toStrictEqual(metadata);
    });

    it("sorts by ORDERBY and pages with limit and offset", async () => {
      const { index } = fx;
      await index.indexDocuments([3, 1, 4, 2].flatMap((p) => one(doc(c, `p${p}`, `item ${p}`, { priority: p }))));
      const desc = await index.findDocuments({ collections: [c], filter: parseFilter("ORDERBYDESCpriority"), limit: 10, offset: 0 });
      expect(desc.map((d) => d.docId)).toEqual(["p4", "p3", "p2", "p1"]);
      const page = await index.findDocuments({ collections: [c], filter: parseFilter("ORDERBYpriority"), limit: 2, offset: 1 });
      expect(page.map((d) => d.docId)).toEqual(["p2", "p3"]);
      expect(page[0]).toMatchObject({ text: "item 2", metadata: { priority: 2 }, version: 1 });
    });
  });
}
