import { describe, expect, it } from "vitest";
import type { Schemas } from "@qdrant/js-client-rest";
import { queryTerms, wordsOf } from "../../search/query-terms.ts";
import { BM25, documentVector, murmur3, queryVector, stem, tokenId } from "./sparse.ts";

const bytes = (s: string) => Buffer.from(s, "utf8");

describe("murmur3 token ids", () => {
  it("matches MurmurHash3 x86_32's published test vectors", () => {
    expect(murmur3(bytes(""), 0)).toBe(0);
    expect(murmur3(bytes(""), 1)).toBe(0x514e28b7);
    expect(murmur3(bytes(""), 0xffffffff)).toBe(0x81f16f39);
    expect(murmur3(bytes("test"), 0x9747b28c)).toBe(0x704b81dc);
    expect(murmur3(bytes("Hello, world!"), 0x9747b28c)).toBe(0x24884cba);
    expect(murmur3(bytes("The quick brown fox jumps over the lazy dog"), 0x9747b28c)).toBe(0x2fa826cd);
    // Tails of 1, 2 and 3 bytes.
    expect(murmur3(bytes("aaaa"), 0x9747b28c)).toBe(0x5a97808a);
    expect(murmur3(bytes("aaa"), 0x9747b28c)).toBe(0x283e0130);
    expect(murmur3(bytes("aa"), 0x9747b28c)).toBe(0x5d211726);
    expect(murmur3(bytes("a"), 0x9747b28c)).toBe(0x7fa09ea6);
  });

  it("is |i32| of the seed-0 hash of the UTF-8 bytes, so it fits Qdrant's u32 indices", () => {
    const signed = murmur3(bytes("héron")) | 0;
    expect(tokenId("héron")).toBe(Math.abs(signed));
    for (const t of ["a", "heron", "😀", "straße", "12345"]) {
      expect(tokenId(t)).toBeGreaterThanOrEqual(0);
      expect(tokenId(t)).toBeLessThanOrEqual(2 ** 31);
    }
  });
});

describe("tokens", () => {
  it("stems English plurals only", () => {
    expect(["herons", "studies", "boxes", "glass", "virus", "bus", "is", "species", "toes"].map(stem)).toEqual([
      "heron",
      "study",
      "boxe",
      "glass",
      "virus",
      "bus",
      "is",
      "specy",
      "toe",
    ]);
  });

  it("splits like queryTerms (letters and digits, lower case), and indexes each word stemmed", () => {
    expect(wordsOf("Heron, heron-HERONS: a study (2024)")).toEqual(["heron", "heron", "herons", "a", "study", "2024"]);
    expect(documentVector("Heron, heron-HERONS: a study (2024)").indices).toEqual(
      [tokenId("heron"), tokenId("study"), tokenId("2024")].sort((a, b) => a - b),
    );
    expect(queryTerms("Heron, heron-HERONS")).toEqual(["heron", "herons"]);
  });
});

describe("sparse vectors", () => {
  it("weights a document's terms by BM25's term-frequency part, indices sorted and unique", () => {
    const v: Schemas["SparseVector"] = documentVector("heron heron egret");
    const norm = BM25.k1 * (1 - BM25.b + (BM25.b * 3) / BM25.avgLength);
    const weight = (tf: number) => (tf * (BM25.k1 + 1)) / (tf + norm);
    const byIndex = new Map(v.indices.map((i, n) => [i, v.values[n]]));
    expect(byIndex.get(tokenId("heron"))).toBeCloseTo(weight(2), 12);
    expect(byIndex.get(tokenId("egret"))).toBeCloseTo(weight(1), 12);
    expect(v.indices).toEqual([...new Set(v.indices)].sort((a, b) => a - b));
  });

  it("favours more occurrences and shorter texts", () => {
    const w = (text: string) => documentVector(text).values[documentVector(text).indices.indexOf(tokenId("heron"))]!;
    expect(w("heron heron heron")).toBeGreaterThan(w("heron heron"));
    expect(w("heron egret")).toBeGreaterThan(w("heron egret egret egret egret"));
  });

  it("is empty for a text without words", () => {
    expect(documentVector("?! …")).toEqual({ indices: [], values: [] });
  });

  it("gives stopwords no term, and counts them towards the text's length", () => {
    const v = documentVector("The heron and the egret");
    expect(v.indices).toEqual([tokenId("heron"), tokenId("egret")].sort((a, b) => a - b));
    const norm = BM25.k1 * (1 - BM25.b + (BM25.b * 5) / BM25.avgLength);
    expect(v.values[0]).toBeCloseTo((BM25.k1 + 1) / (1 + norm), 12);
    expect(documentVector("the and of")).toEqual({ indices: [], values: [] });
    // The query side keeps a query of stopwords alone, which then matches no document.
    const query = queryVector(queryTerms("the of"));
    expect(query.indices).toHaveLength(2);
    expect(query.indices.filter((i) => documentVector("the heron of the egret").indices.includes(i))).toEqual([]);
  });

  it("numbers a token by its UTF-8 bytes, however long", () => {
    for (const token of ["heron", "ελάφι", "🦩x", "y".repeat(341), "z".repeat(342), "é".repeat(600)]) {
      expect(tokenId(token)).toBe(Math.abs(murmur3(Buffer.from(token, "utf8")) | 0));
    }
  });

  it("gives each distinct query term (stemmed) weight 1", () => {
    expect(queryVector(["herons", "heron", "egret"])).toEqual({
      indices: [tokenId("heron"), tokenId("egret")].sort((a, b) => a - b),
      values: [1, 1],
    });
    expect(queryVector([])).toEqual({ indices: [], values: [] });
  });
});
