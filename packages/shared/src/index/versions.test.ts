import { describe, expect, it } from "vitest";
import { acceptHighest, acceptInOrder, docKey, newestVersions, supersededIn } from "./versions.ts";

const item = (docId: string, version: number, tag = "") => ({ doc: { collection: "c", docId, version }, tag });
const held = (entries: [string, number][]) => new Map(entries.map(([docId, v]) => [docKey("c", docId), v]));

describe("document keys and versions", () => {
  it("keys a document by collection and id, unambiguously", () => {
    expect(docKey("a", "b")).toBe('["a","b"]');
    expect(docKey("a,b", "c")).not.toBe(docKey("a", "b,c"));
  });

  it("keeps each document's highest version, and refuses an item only when a newer one is held", () => {
    const versions = newestVersions([
      { collection: "c", docId: "a", version: 2 },
      { collection: "c", docId: "a", version: 5 },
      { collection: "d", docId: "a", version: 1 },
    ]);
    expect([...versions]).toEqual([
      [docKey("c", "a"), 5],
      [docKey("d", "a"), 1],
    ]);
    const cases: [number, boolean][] = [
      [4, true],
      [5, false],
      [6, false],
    ];
    for (const [version, refused] of cases)
      expect(supersededIn(versions, { collection: "c", docId: "a", version }), `version ${version}`).toBe(refused);
    expect(supersededIn(versions, { collection: "c", docId: "new", version: 1 })).toBe(false);
  });
});

describe("which items of a batch are accepted", () => {
  // [held before, batch (docId@version), acceptInOrder's answer and what it writes, acceptHighest's answer]
  const cases: [string, [string, number][], string[], boolean[], string[], boolean[]][] = [
    ["new documents", [], ["a@1", "b@1"], [true, true], ["a@1", "b@1"], [true, true]],
    ["an older version than held", [["a", 3]], ["a@2"], [false], [], [true]],
    ["the version held, again", [["a", 3]], ["a@3"], [true], ["a@3"], [true]],
    ["two versions, rising", [], ["a@1", "a@2"], [true, true], ["a@2"], [false, true]],
    ["two versions, falling", [], ["a@2", "a@1"], [true, false], ["a@2"], [true, false]],
    ["one version twice: the last written, or the first", [], ["a@2#x", "a@2#y"], [true, true], ["a@2#y"], [true, false]],
    ["a refused item between two documents", [["b", 9]], ["a@1", "b@1", "c@1"], [true, false, true], ["a@1", "c@1"], [true, true, true]],
  ];
  const parse = (s: string) => {
    const [, docId, version, tag] = /^(\w+)@(\d+)(?:#(\w+))?$/.exec(s)!;
    return item(docId!, Number(version), tag ?? "");
  };
  const show = (i: ReturnType<typeof item>) => `${i.doc.docId}@${i.doc.version}${i.tag ? `#${i.tag}` : ""}`;

  for (const [name, before, batch, inOrder, written, highest] of cases) {
    it(name, () => {
      const items = batch.map(parse);
      const indexed = held(before);
      const { accepted, latest } = acceptInOrder(items, indexed);
      expect(accepted).toEqual(inOrder);
      expect(latest.map(show)).toEqual(written);
      for (const i of latest) expect(indexed.get(docKey("c", i.doc.docId))).toBe(i.doc.version);
      // Checked after writing, against what the index then holds: the batch alone decides here.
      expect(acceptHighest(items)).toEqual(highest);
    });
  }
});
