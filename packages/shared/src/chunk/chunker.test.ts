import { afterEach, describe, expect, it } from "vitest";
import type { Section } from "../extract/types.ts";
import { createChunker, type Chunker } from "./chunker.ts";
import { chunkDocument } from "./document.ts";

const options = { chunkTokens: 48, overlapTokens: 8 };
const prose = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => `Sentence ${i} of ${tag} is about herons, terns and plovers.`).join(" ");
const pages = (texts: string[]): { text: string; sections: Section[] } => {
  const sections: Section[] = [];
  let text = "";
  texts.forEach((t, i) => {
    if (i > 0) text += "\n\n";
    sections.push({ start: text.length, end: text.length + t.length, page: i + 1 });
    text += t;
  });
  return { text, sections };
};
const docs: { text: string; sections: Section[] }[] = [
  { text: prose(40, "plain text"), sections: [] },
  {
    text: `# Birds\n\n${prose(8, "the intro")}\n\n## Shore birds\n\n${prose(12, "shore birds")}\n\n## Sea birds\n\n${prose(6, "sea birds")}`,
    sections: [],
  },
  pages([prose(9, "page one"), prose(3, "page two"), prose(14, "page three")]),
  { text: "", sections: [] },
  { text: " \n\t ", sections: [] },
  { text: "短い文。".repeat(200) + " 🐦 ".repeat(50) + "ü".repeat(3_000), sections: [] },
];

const open: Chunker[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

describe("createChunker", () => {
  it("fails a call with the error chunking threw, of the same class and message as on the caller's thread", async () => {
    const bad = { chunkTokens: 1, overlapTokens: 0 };
    const inline = await createChunker(bad, 0)
      .chunk(docs[0]!.text, [])
      .catch((err: unknown) => err);
    const chunker = createChunker(bad, 1);
    open.push(chunker);
    const threaded = await chunker.chunk(docs[0]!.text, []).catch((err: unknown) => err);
    expect(inline).toBeInstanceOf(RangeError);
    expect(threaded).toBeInstanceOf(RangeError);
    expect((threaded as Error).message).toBe((inline as Error).message);
  });

  it("chunks on its threads as on the caller's: the same chunks, offsets and citations, each call its own", async () => {
    const chunker = createChunker(options, 2);
    open.push(chunker);
    const expected = docs.map((d) => chunkDocument(d.text, d.sections, options));
    expect(expected[0]!.length).toBeGreaterThan(5);
    expect(expected[2]!.map((c) => c.citation.page)).toContain(3);
    // The calls of one turn go out together, split between the two threads; then again, one by one.
    expect(await Promise.all(docs.map((d) => chunker.chunk(d.text, d.sections)))).toEqual(expected);
    for (const [i, d] of docs.entries()) expect(await chunker.chunk(d.text, d.sections)).toEqual(expected[i]);
  });

  it("chunks on the caller's thread with no threads", async () => {
    const chunker = createChunker(options, 0);
    open.push(chunker);
    expect(await chunker.chunk(docs[1]!.text, [])).toEqual(chunkDocument(docs[1]!.text, [], options));
  });

  it("fails the calls a thread holds when it stops, and every call once closed", async () => {
    const chunker = createChunker(options, 1);
    const pending = chunker.chunk(prose(50_000, "a long text"), []);
    await Promise.resolve(); // the call has gone out to the thread
    await chunker.close();
    await expect(pending).rejects.toThrow(/chunker thread exited/);
    await expect(chunker.chunk("A short text.", [])).rejects.toThrow(/closed/);
  });
});
