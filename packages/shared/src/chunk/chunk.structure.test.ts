import { describe, expect, it } from "vitest";
import { chunkText, type Chunk, type ChunkOptions } from "./chunk.ts";
import { countTokens } from "./tokenizer.ts";

const ROWS = Array.from(
  { length: 8 },
  (_, i) => `| item-${i} | Ends here. Then more. Row ${i} holds a few sentences! Does it? Yes. | ${i * 7} |`,
);
const TABLE = ["| Name | Notes | Count |", "| --- | --- | --- |", ...ROWS].join("\n");
const CODE = [
  "```sh",
  "# comment: install first. Then configure.",
  "npm install --save docstore",
  "",
  "# comment: run it. It listens on 8080.",
  "docstore serve --port 8080",
  "```",
].join("\n");
const BIG_CODE = [
  "~~~py",
  ...Array.from({ length: 30 }, (_, i) => (i % 5 === 4 ? "" : `# step ${i}. Then x_${i} = compute(${i}).`)),
  "~~~",
].join("\n");
const LIST = [
  "- First item. It has two sentences.",
  "- Second item, shorter.",
  "- Third item. Ends here. Then more words follow in this item.",
].join("\n");
const PROSE = "Chunking follows structure. Headings come first, then paragraphs, then sentences. Words are the last resort.";

const DOC = [
  "# Guide",
  PROSE,
  "## List",
  LIST,
  "## Table",
  TABLE,
  "## Code",
  CODE,
  PROSE,
  "## Big code",
  BIG_CODE,
  "## End",
  `${PROSE} ${PROSE}`,
].join("\n\n");

function expectWellFormed(source: string, chunks: Chunk[], opts: ChunkOptions): void {
  expect(chunks[0]!.start).toBe(0);
  expect(chunks.at(-1)!.end).toBe(source.length);
  chunks.forEach((chunk, i) => {
    expect(chunk.index).toBe(i);
    expect(chunk.text).toBe(source.slice(chunk.start, chunk.end));
    expect(chunk.tokens).toBe(countTokens(chunk.text));
    expect(chunk.tokens).toBeLessThanOrEqual(opts.chunkTokens);
    if (i > 0) {
      expect(chunk.start).toBeGreaterThan(chunks[i - 1]!.start);
      expect(source.slice(chunks[i - 1]!.end, chunk.start).trim()).toBe("");
    }
  });
}

/** No chunk starts or ends strictly inside source[start, end), and one chunk holds all of it. */
function expectKeptWhole(chunks: Chunk[], start: number, end: number): void {
  for (const chunk of chunks) {
    expect(chunk.start > start && chunk.start < end, `chunk ${chunk.index} starts inside [${start}, ${end})`).toBe(false);
    expect(chunk.end > start && chunk.end < end, `chunk ${chunk.index} ends inside [${start}, ${end})`).toBe(false);
  }
  expect(chunks.some((c) => c.start <= start && c.end >= end)).toBe(true);
}

const OPTIONS: ChunkOptions[] = [
  { chunkTokens: 40, overlapTokens: 0 },
  { chunkTokens: 48, overlapTokens: 12 },
  { chunkTokens: 64, overlapTokens: 16 },
  { chunkTokens: 80, overlapTokens: 30 },
  { chunkTokens: 80, overlapTokens: 60 },
];

describe("chunkText on structured Markdown", () => {
  it("has blocks of the sizes the tests rely on", () => {
    for (const row of ROWS) expect(countTokens(row)).toBeLessThanOrEqual(40);
    expect(countTokens(CODE)).toBeGreaterThan(40);
    expect(countTokens(CODE)).toBeLessThanOrEqual(64);
    expect(countTokens(BIG_CODE)).toBeGreaterThan(3 * 80);
  });

  for (const opts of OPTIONS) {
    describe(`with ${opts.chunkTokens} tokens and an overlap of ${opts.overlapTokens}`, () => {
      const chunks = chunkText(DOC, opts);

      it("keeps offsets exact and the budget", () => expectWellFormed(DOC, chunks, opts));

      it("never cuts inside a table row", () => {
        for (const row of ROWS) {
          const at = DOC.indexOf(row);
          expectKeptWhole(chunks, at, at + row.length);
        }
      });

      it("keeps the fenced code block whole when it fits, else cuts it only between lines", () => {
        const at = DOC.indexOf(CODE);
        if (countTokens(CODE) <= opts.chunkTokens) {
          expectKeptWhole(chunks, at, at + CODE.length);
        } else {
          expectCutsAtLineBreaks(DOC, chunks, at, at + CODE.length);
        }
      });

      it("cuts a code block bigger than a chunk only at its line breaks", () => {
        const at = DOC.indexOf(BIG_CODE);
        const inside = expectCutsAtLineBreaks(DOC, chunks, at, at + BIG_CODE.length);
        expect(inside).toBeGreaterThan(1);
      });

      it("starts chunks at headings: a chunk reaching across one ends before another", () => {
        const headings = [...DOC.matchAll(/\n## /g)].map((m) => m.index + 1);
        const afterEnd = (chunk: Chunk) => chunk.end + (DOC.slice(chunk.end).length - DOC.slice(chunk.end).trimStart().length);
        for (const at of headings) {
          const across = chunks.filter((c) => c.start < at && c.end > at);
          if (across.length === 0) expect(chunks.some((c) => c.start === at)).toBe(true);
          for (const chunk of across) expect(chunk.end === DOC.length || headings.includes(afterEnd(chunk))).toBe(true);
        }
        // The small code section fits whole in the larger chunks: it starts one.
        if (opts.chunkTokens >= 64) expect(chunks.some((c) => c.start === DOC.indexOf("## Code"))).toBe(true);
      });
    });
  }

  it("cuts the code block only between lines when it does not fit, even with no blank line", () => {
    const code = ["```", ...Array.from({ length: 12 }, (_, i) => `# comment ${i}. Then call(${i}). Done.`), "```"].join("\n");
    const source = `Intro.\n\n${code}\n\nOutro.`;
    for (const opts of [
      { chunkTokens: 40, overlapTokens: 0 },
      { chunkTokens: 40, overlapTokens: 15 },
    ]) {
      const chunks = chunkText(source, opts);
      expectWellFormed(source, chunks, opts);
      expect(expectCutsAtLineBreaks(source, chunks, source.indexOf(code), source.indexOf(code) + code.length)).toBeGreaterThan(1);
    }
  });

  it("splits a table row bigger than a chunk between words, as prose", () => {
    const row = `| long | ${"Ends here. Then more. ".repeat(30).trim()} |`;
    const source = `Before.\n\n${row}\n\nAfter.`;
    const opts = { chunkTokens: 40, overlapTokens: 8 };
    const chunks = chunkText(source, opts);
    expectWellFormed(source, chunks, opts);
    expect(chunks.length).toBeGreaterThan(3);
  });
});

/** Every chunk start or end strictly inside source[start, end) is at a line break; returns how many there are. */
function expectCutsAtLineBreaks(source: string, chunks: Chunk[], start: number, end: number): number {
  let inside = 0;
  for (const chunk of chunks) {
    if (chunk.start > start && chunk.start < end) {
      inside++;
      expect(source.slice(0, chunk.start).match(/\n[^\S\n]*$/), `chunk ${chunk.index} starts mid-line`).not.toBeNull();
    }
    if (chunk.end > start && chunk.end < end) {
      inside++;
      expect(source.slice(chunk.end).match(/^[^\S\n]*\n/), `chunk ${chunk.index} ends mid-line`).not.toBeNull();
    }
  }
  return inside;
}
