/**
 * The contract every SearchIndex adapter must meet, written once. Each adapter's test file
 * calls `describeIndexContract` with a factory; the filter cases are checked against the
 * reference evaluator, so every backend gives the same answers.
 */
import { describe, expect, it } from "vitest";
import { fixturePerTest } from "./contract-fixture.ts";
import type { IndexEntry, IndexedDocument, SearchIndex } from "../src/ports.ts";
import type { Metadata } from "../src/domain/metadata.ts";
import { evaluate } from "../src/filter/evaluate.ts";
import { parseFilter } from "../src/filter/parse.ts";
import { HOSTILE_VALUES, LOOKALIKE_IDS, filterValue } from "./hostile-values.ts";
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
  "",
  "status=open",
  "status!=open",
  "status=",
  "priority=2",
  "priority>2",
  "priority<=2",
  "priorityIN1,3,5",
  "priorityNOT IN1,3,5",
  "typeINdb2,sql server",
  "noteLIKEreport",
  "noteNOT LIKEreport",
  "noteSTARTSWITHalp",
  "noteENDSWITHport",
  "priorityBETWEEN2@4",
  "createdBETWEEN2024-05-01@2024-05-31",
  "created>2024-05-31",
  "noteISEMPTY",
  "noteISNOTEMPTY",
  "flag=true",
  "flag=false",
  "flag!=true",
  "tags=b",
  "tags!=b",
  "tagsISEMPTY",
  "score>9",
  "score<=9.5",
  "statusSAMEASprev_status",
  "statusNSAMEASprev_status",
  "statusANYTHING",
  "status=open^priority>1",
  "status=open^ORstatus=pending^priority<4",
  "status=closed^NQflag=true",
  "typeLIKEreport^statusNOT INclosed,archived^ORDERBYDESCcreated",
  "status=open^ORDERBYpriority^EQ",
];

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** What a test may ask of the index it gets; the factory passes it to the adapter. */
export interface IndexFixtureOptions {
  fusion?: HybridFusion;
}

export function describeIndexContract(name: string, make: (options?: IndexFixtureOptions) => Promise<IndexFixture>): void {
  describe(`SearchIndex contract: ${name}`, () => {
    let fx: IndexFixture;
    let c: string;
    fixturePerTest(make, (made, collection) => {
      fx = made;
      c = collection;
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
      expect((await index.search({ query: "shared", collections: [c], filter: parseFilter(""), k: 10 })).map((h) => h.collection)).toEqual([
        c,
      ]);
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
      await index.indexDocuments([
        {
          doc: doc(c, "d1", text),
          chunks: [
            { index: 0, text: text.slice(0, 24), start: 0, end: 24 },
            { index: 1, text: text.slice(25), start: 25, end: text.length },
          ],
        },
      ]);
      const hits = await index.search({ query: "storks", collections: [c], filter: parseFilter(""), k: 10 });
      expect(hits).toHaveLength(1);
      expect(hits[0]).toMatchObject({ chunkIndex: 1, start: 25, end: text.length, text: "second part about storks." });
    });

    it("gives a document's chunks in order with their citations, of the version indexed", async () => {
      const { index } = fx;
      const text = "Intro on cranes. Storks migrate south.";
      await index.indexDocuments([
        {
          doc: doc(c, "d1", text, {}, 1),
          chunks: [
            { index: 1, text: text.slice(17), start: 17, end: text.length, citation: { page: 2, headingPath: ["Birds", "Storks"] } },
            { index: 0, text: text.slice(0, 16), start: 0, end: 16, citation: { page: 1 } },
          ],
        },
      ]);
      expect(await index.documentChunks(c, "d1")).toStrictEqual({
        version: 1,
        chunks: [
          { chunkIndex: 0, text: "Intro on cranes.", start: 0, end: 16, citation: { page: 1 } },
          {
            chunkIndex: 1,
            text: "Storks migrate south.",
            start: 17,
            end: text.length,
            citation: { page: 2, headingPath: ["Birds", "Storks"] },
          },
        ],
      });
      await index.indexDocuments(one(doc(c, "d1", "only one chunk now", {}, 2)));
      expect(await index.documentChunks(c, "d1")).toStrictEqual({
        version: 2,
        chunks: [{ chunkIndex: 0, text: "only one chunk now", start: 0, end: 18 }],
      });
      await index.indexDocuments([{ doc: doc(c, "empty", "", {}, 1), chunks: [] }]);
      expect(await index.documentChunks(c, "empty")).toStrictEqual({ version: 1, chunks: [] });
      expect(await index.documentChunks(c, "missing")).toBeNull();
      await index.deleteDocument(c, "d1");
      expect(await index.documentChunks(c, "d1")).toBeNull();
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
      const filtered = await index.search({
        query: "gamma",
        vector: [0, 1, 0],
        collections: [c],
        filter: parseFilter("status=open"),
        k: 10,
      });
      expect(filtered).toEqual([]);
      await expect(index.indexDocuments([withVector("c", "other", [1, 0])])).rejects.toThrow(/dimensional/);
    });

    it("fuses the two rankings with the weights and candidate depth it was given", async () => {
      // BM25 ranks a before b; cosine ranks b before a.
      const top = async (fusion: HybridFusion) => {
        const own = await make({ fusion });
        try {
          const chunk = (id: string, text: string, vector: number[]) => ({
            doc: doc(c, id, text),
            chunks: [{ index: 0, text, start: 0, end: text.length, vector }],
          });
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

    it("treats metadata and filter values carrying SQL, wildcards, NUL or paths only as values", async () => {
      const { index } = fx;
      const metadataOf = (v: string): Metadata => ({ status: v, note: `pre${v}post`, tags: [v, "plain"] });
      const docs = HOSTILE_VALUES.map((v, i) => doc(c, `h${i}`, `hostile value number ${i}`, metadataOf(v)));
      docs.push(doc(c, "plain", "hostile value plain", { status: "plain", note: "plain" }), doc(c, "bare", "hostile value bare"));
      await index.indexDocuments(docs.flatMap(one));
      const byId = new Map(docs.map((d) => [d.docId, d.metadata]));
      for (const [i, v] of HOSTILE_VALUES.entries()) {
        const e = filterValue(v);
        const texts = [
          `status=${e}`,
          `status!=${e}`,
          `tags=${e}`,
          `noteLIKE${e}`,
          `statusSTARTSWITH${e}`,
          `noteENDSWITH${e}post`,
          `noteNOT LIKE${e}`,
          `status>=${e}`,
        ];
        if (!v.includes(",")) texts.push(`statusIN${e},plain`, `tagsNOT IN${e}`);
        for (const text of texts) {
          const filter = parseFilter(text);
          const expected = docs
            .filter((d) => evaluate(filter, d.metadata))
            .map((d) => d.docId)
            .sort();
          const found = await index.findDocuments({ collections: [c], filter, limit: 100, offset: 0 });
          expect(found.map((d) => d.docId).sort(), text).toEqual(expected);
          const searched = await index.search({ query: "hostile value", collections: [c], filter, k: 100 });
          expect([...new Set(searched.map((h) => h.docId))].sort(), text).toEqual(expected);
        }
        // Equality matches the one document holding the value, which comes back exactly.
        const [only, ...more] = await index.findDocuments({ collections: [c], filter: parseFilter(`status=${e}`), limit: 100, offset: 0 });
        expect(more, v).toEqual([]);
        expect(only?.docId, v).toBe(`h${i}`);
        expect(only?.metadata, v).toStrictEqual(byId.get(`h${i}`));
      }
    });

    it("keeps collections and documents whose names a LIKE pattern or a glob would confuse apart", async () => {
      const { index } = fx;
      const names = [`${c}_x`, `${c}yx`, `${c}-x`, `${c}_`, `${c}__x`];
      await index.indexDocuments(
        names.flatMap((name) => LOOKALIKE_IDS.flatMap((id) => one(doc(name, id, `lookalike ${id} in ${name}`, { owner: name, id })))),
      );
      const all = parseFilter("");
      const docsOf = async (name: string) =>
        (await index.findDocuments({ collections: [name], filter: all, limit: 100, offset: 0 }))
          .map((d) => `${d.collection}/${d.docId}`)
          .sort();
      const hitsOf = async (names: string[]) =>
        [...new Set((await index.search({ query: "lookalike", collections: names, filter: all, k: 100 })).map((h) => h.collection))].sort();
      expect(await hitsOf([`${c}_x`])).toEqual([`${c}_x`]);
      expect(await docsOf(`${c}_x`)).toEqual(LOOKALIKE_IDS.map((id) => `${c}_x/${id}`).sort());
      await index.deleteDocument(`${c}_x`, "a_c");
      await index.deleteDocument(`${c}_x`, "a_");
      expect(await docsOf(`${c}_x`)).toEqual(
        LOOKALIKE_IDS.filter((id) => id !== "a_c" && id !== "a_")
          .map((id) => `${c}_x/${id}`)
          .sort(),
      );
      await index.deleteCollection(`${c}_`);
      await index.deleteCollection(`${c}_x`);
      for (const name of [`${c}yx`, `${c}-x`, `${c}__x`])
        expect(await docsOf(name), name).toEqual(LOOKALIKE_IDS.map((id) => `${name}/${id}`).sort());
      expect(await docsOf(`${c}_x`)).toEqual([]);
      expect(await docsOf(`${c}_`)).toEqual([]);
      expect(await hitsOf([`${c}yx`, `${c}-x`, `${c}__x`, `${c}_x`])).toEqual([`${c}yx`, `${c}-x`, `${c}__x`].sort());
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

    it("hands out every match in findDocuments' order, a batch at a time", async () => {
      const { index } = fx;
      const priorities = [5, 3, 1, 4, 2, 6, 7];
      await index.indexDocuments(
        priorities.flatMap((p) =>
          one(doc(c, `p${p}`, `item ${p}`, { priority: p, rank: String(10 - p), status: p % 2 ? "open" : "closed" })),
        ),
      );
      await index.indexDocuments(one(doc(`${c}-other`, "p9", "item 9", { priority: 9 })));
      // Sorted by LanceDB on a typed field, and by the reference order on another.
      for (const text of ["ORDERBYDESCpriority", "ORDERBYrank", "status=open^ORDERBYpriority", ""]) {
        const filter = parseFilter(text);
        const batches: string[][] = [];
        for await (const batch of index.scanDocuments({ collections: [c], filter, batch: 3 })) batches.push(batch.map((d) => d.docId));
        const all = await index.findDocuments({ collections: [c], filter, limit: 100, offset: 0 });
        expect(batches.flat(), text).toEqual(all.map((d) => d.docId));
        expect(
          batches.every((b) => b.length <= 3),
          text,
        ).toBe(true);
      }
      const [first] = await collect(index.scanDocuments({ collections: [c], filter: parseFilter("ORDERBYpriority"), batch: 2 }));
      expect(first).toEqual([
        expect.objectContaining({ docId: "p1", text: "item 1", metadata: expect.objectContaining({ priority: 1 }) }),
        expect.objectContaining({ docId: "p2", text: "item 2" }),
      ]);
      expect(await collect(index.scanDocuments({ collections: [`${c}-none`], filter: parseFilter(""), batch: 2 }))).toEqual([]);
    });

    it("inventories each document's newest version and chunk count, a batch at a time", async () => {
      const { index } = fx;
      const other = `${c}-x`;
      const parts = (collection: string, docId: string, n: number, version = 1) => ({
        doc: doc(collection, docId, Array.from({ length: n }, (_, i) => `part${i}`).join(" "), {}, version),
        chunks: Array.from({ length: n }, (_, i) => ({ index: i, text: `part${i}`, start: i * 6, end: i * 6 + 5 })),
      });
      await index.indexDocuments([parts(c, "a", 3), parts(c, "b", 1, 4), parts(c, "c", 2, 2), parts(c, "d:1", 1), parts(other, "a", 2)]);
      await index.indexDocuments([{ doc: doc(c, "empty", "", {}, 1), chunks: [] }]);
      await index.indexDocuments([parts(c, "a", 1, 2)]); // a new version with fewer chunks replaces the old one whole
      const ours = (entries: IndexEntry[]) =>
        entries
          .filter((e) => e.collection === c || e.collection === other)
          .sort((x, y) => (x.collection === y.collection ? (x.docId < y.docId ? -1 : 1) : x.collection === c ? -1 : 1));
      const expected = [
        { collection: c, docId: "a", version: 2, chunks: 1 },
        { collection: c, docId: "b", version: 4, chunks: 1 },
        { collection: c, docId: "c", version: 2, chunks: 2 },
        { collection: c, docId: "d:1", version: 1, chunks: 1 },
        { collection: c, docId: "empty", version: 1, chunks: 0 },
      ];
      const batches = await collect(index.inventory({ collection: c }, 2));
      expect(batches.every((b) => b.length > 0 && b.length <= 2)).toBe(true);
      expect(ours(batches.flat())).toEqual(expected);
      expect(ours((await collect(index.inventory({ collection: null }, 3))).flat())).toEqual([
        ...expected,
        { collection: other, docId: "a", version: 1, chunks: 2 },
      ]);
      expect(ours((await collect(index.inventory({ collection: c, docIds: ["c", "missing", "a", "c"] }, 10))).flat())).toEqual([
        expected[0],
        expected[2],
      ]);
      expect(await collect(index.inventory({ collection: `${c}-none` }, 10))).toEqual([]);
      await index.deleteDocument(c, "a");
      await index.deleteDocument(other, "a");
      expect(ours((await collect(index.inventory({ collection: null }, 100))).flat())).toEqual(expected.slice(1));
    });
  });
}
