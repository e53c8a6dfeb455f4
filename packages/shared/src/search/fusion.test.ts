import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { cosine, dot, normalize, reciprocalRankFusion } from "./fusion.ts";

const id = (s: string) => s;
const ids = (fused: { item: string }[]) => fused.map((f) => f.item);
/** Two ranked lists sharing "b": first in one, second in the other. */
const twoLists = [
  ["a", "b"],
  ["b", "c"],
];

describe("reciprocalRankFusion", () => {
  it("scores 1/(k + rank), summed over the lists", () => {
    const fused = reciprocalRankFusion(twoLists, id, 60);
    expect(ids(fused)).toEqual(["b", "a", "c"]);
    expect(fused[0]!.score).toBeCloseTo(1 / 62 + 1 / 61);
    expect(fused[1]!.score).toBeCloseTo(1 / 61);
    expect(fused[2]!.score).toBeCloseTo(1 / 62);
  });

  it("ranks first an item that is first in every list", () => {
    const list = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 3 }), { maxLength: 20 });
    fc.assert(
      fc.property(list, list, fc.integer({ min: 0, max: 100 }), (xs, ys, k) => {
        const top = "\u0000top";
        expect(
          reciprocalRankFusion(
            [
              [top, ...xs],
              [top, ...ys],
            ],
            id,
            k,
          )[0]!.item,
        ).toBe(top);
      }),
    );
  });

  it("keeps every item once, scores sorted, items of one list only included", () => {
    const list = fc.array(fc.constantFrom("a", "b", "c", "d", "e", "f"), { maxLength: 8 });
    fc.assert(
      fc.property(fc.array(list, { maxLength: 4 }), (lists) => {
        const fused = reciprocalRankFusion(lists, id);
        expect(new Set(ids(fused))).toEqual(new Set(lists.flat()));
        expect(fused).toHaveLength(new Set(lists.flat()).size);
        for (let i = 1; i < fused.length; i++) expect(fused[i - 1]!.score).toBeGreaterThanOrEqual(fused[i]!.score);
      }),
    );
  });

  it("does not change when a list repeats an item lower down", () => {
    expect(reciprocalRankFusion([["a", "b", "a"], ["c"]], id)).toEqual(reciprocalRankFusion([["a", "b"], ["c"]], id));
  });

  it("breaks ties by best rank, then by first appearance, lists in the order given", () => {
    // k = 0 makes exact ties easy. "a" first in list 1 and "b" first in list 2 (1.0 each): first appearance wins.
    expect(
      ids(
        reciprocalRankFusion(
          [
            ["a", "x"],
            ["b", "y"],
          ],
          id,
          0,
        ),
      ),
    ).toEqual(["a", "b", "x", "y"]);
    expect(
      ids(
        reciprocalRankFusion(
          [
            ["b", "y"],
            ["a", "x"],
          ],
          id,
          0,
        ),
      ),
    ).toEqual(["b", "a", "y", "x"]);
    // k = 0: "p" at ranks 2 and 2 (0.5 + 0.5 = 1.0) ties "q" at rank 1 in one list (1.0): the better best rank wins.
    expect(
      ids(
        reciprocalRankFusion(
          [
            ["r", "p"],
            ["q", "p"],
          ],
          id,
          0,
        ),
      ).slice(0, 3),
    ).toEqual(["r", "q", "p"]);
  });

  it("fuses objects by key, keeping the first instance", () => {
    const lexical = [
      { id: "1", from: "bm25" },
      { id: "2", from: "bm25" },
    ];
    const dense = [{ id: "2", from: "dense" }];
    const fused = reciprocalRankFusion([lexical, dense], (h) => h.id);
    expect(fused.map((f) => f.item)).toEqual([
      { id: "2", from: "bm25" },
      { id: "1", from: "bm25" },
    ]);
  });

  it("weights a list by dividing its ranks, as Qdrant's weighted RRF does", () => {
    const fused = reciprocalRankFusion(twoLists, id, 60, [1, 2]);
    // b: 1 / (2 / 1 + 60) + 1 / (1 / 2 + 60); c: 1 / (2 / 2 + 60); a: 1 / (1 + 60).
    expect(ids(fused)).toEqual(["b", "a", "c"]);
    expect(fused[0]!.score).toBeCloseTo(1 / 62 + 1 / 60.5, 12);
    expect(fused[1]!.score).toBeCloseTo(1 / 61, 12);
    expect(fused[2]!.score).toBeCloseTo(1 / 61, 12);
    // Three times the weight: both items of the heavier list rank before the lighter list's first.
    const weighted = (weights: number[]) =>
      ids(
        reciprocalRankFusion(
          [
            ["a", "b"],
            ["y", "z"],
          ],
          id,
          60,
          weights,
        ),
      );
    expect(weighted([1, 3])).toEqual(["y", "z", "a", "b"]);
    expect(weighted([3, 1])).toEqual(["a", "b", "y", "z"]);
  });

  it("with weights of 1 ranks and scores as without weights", () => {
    const list = fc.array(fc.constantFrom("a", "b", "c", "d", "e", "f"), { maxLength: 8 });
    fc.assert(
      fc.property(list, list, fc.integer({ min: 0, max: 100 }), (xs, ys, k) => {
        expect(reciprocalRankFusion([xs, ys], id, k, [1, 1])).toEqual(reciprocalRankFusion([xs, ys], id, k));
      }),
    );
  });

  it("refuses weights that do not match the lists or are not positive", () => {
    expect(() => reciprocalRankFusion([["a"], ["b"]], id, 60, [1])).toThrow(RangeError);
    expect(() => reciprocalRankFusion([["a"], ["b"]], id, 60, [1, 0])).toThrow(RangeError);
    expect(() => reciprocalRankFusion([["a"], ["b"]], id, 60, [1, Number.NaN])).toThrow(RangeError);
  });

  it("handles no lists and empty lists, and refuses a negative k", () => {
    expect(reciprocalRankFusion([], id)).toEqual([]);
    expect(reciprocalRankFusion([[], []], id)).toEqual([]);
    expect(() => reciprocalRankFusion([["a"]], id, -1)).toThrow(RangeError);
  });
});

describe("vector helpers", () => {
  it("normalises, so that dot is the cosine", () => {
    const a = normalize([3, 4]);
    expect(Array.from(a)).toEqual([Math.fround(0.6), Math.fround(0.8)]);
    expect(dot(a, normalize([4, 3]))).toBeCloseTo(cosine([3, 4], [4, 3]), 6);
    expect(cosine([1, 0], [0, 1])).toBe(0);
    expect(cosine([0, 0], [1, 1])).toBe(0);
    expect(Array.from(normalize([0, 0]))).toEqual([0, 0]);
    expect(() => dot([1], [1, 2])).toThrow(RangeError);
  });
});
