import { describe, expect, it } from "vitest";
import { MIN_INEXACT_LIMIT, fetchUntilKept, firstDepth } from "./deeper.ts";

/** Rankings over 0..size-1 (best first); the answer keeps the numbers `pass` accepts. */
function run(
  sizes: number[],
  pass: (n: number) => boolean,
  want: number,
  first: number,
  more: { final?: () => boolean; deeper?: (limit: number) => number } = {},
) {
  const depths: number[] = [];
  const kept = fetchUntilKept({
    want,
    first,
    fetch: async (limit) => {
      depths.push(limit);
      return sizes.map((size) => Array.from({ length: Math.min(size, limit) }, (_, i) => i));
    },
    keep: (lists) => lists.map((l) => l.filter(pass)),
    ...more,
  });
  return kept.then((lists) => ({ lists, depths }));
}

describe("firstDepth", () => {
  it("asks for want when the engine's answer is exact, else four times as many, at least MIN_INEXACT_LIMIT", () => {
    const cases: [number, boolean, number][] = [
      [10, true, 10],
      [10, false, MIN_INEXACT_LIMIT],
      [16, false, 64],
      [100, false, 400],
      [100, true, 100],
    ];
    for (const [want, exact, depth] of cases) expect(firstDepth(want, exact), `${want} ${exact}`).toBe(depth);
  });
});

describe("fetchUntilKept", () => {
  const even = (n: number) => n % 2 === 0;
  const tenth = (n: number) => n % 10 === 0;
  // [case, list sizes, kept when, want, first depth, depths asked, kept counts]
  const cases: [string, number[], (n: number) => boolean, number, number, number[], number[]][] = [
    ["everything passes: one round", [1000], () => true, 5, 5, [5], [5]],
    ["half pass: one deeper round", [1000], even, 5, 5, [5, 20], [5]],
    ["a tenth pass: deeper, four times a round", [1000], tenth, 5, 5, [5, 20, 80], [5]],
    ["too few anywhere: until the ranking has no more", [30], tenth, 5, 5, [5, 20, 80], [3]],
    ["two rankings: until each has enough or no more", [1000, 12], even, 8, 8, [8, 32], [8, 6]],
    ["a first depth that is enough", [1000], tenth, 5, 64, [64], [5]],
  ];
  for (const [name, sizes, pass, want, first, depths, counts] of cases) {
    it(name, async () => {
      const found = await run(sizes, pass, want, first);
      expect(found.depths).toEqual(depths);
      expect(found.lists.map((l) => l.length)).toEqual(counts);
      for (const l of found.lists) expect(l).toEqual(l.filter(pass).slice(0, want)); // in rank order, only what passes
    });
  }

  it("stops after a round its caller calls final, and goes to the depth its caller names", async () => {
    expect((await run([1000], tenth, 5, 5, { final: () => true })).depths).toEqual([5]);
    expect((await run([1000], tenth, 5, 5, { deeper: (limit) => limit + 10 })).depths).toEqual([5, 15, 25, 35, 45]);
  });
});
