import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkText, type Chunk, type ChunkOptions } from "./chunk.ts";
import { countTokens } from "./tokenizer.ts";

const word = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[A-Za-z]{1,12}$/) },
  {
    weight: 2,
    arbitrary: fc.constantFrom("e.g.", "3.5", "naïve", "ünïcödé", "日本語", "🦊", "👩‍👩‍👧", "x\u0301", "<|endoftext|>", "https://example.com/a?b=c", "**bold.**", '"quoted."'),
  },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 6 }) },
);
const sentence = fc
  .tuple(fc.array(word, { minLength: 1, maxLength: 25 }), fc.constantFrom(".", "!", "?", "", "。", "…"))
  .map(([words, stop]) => words.join(" ") + stop);
const paragraph = fc.array(sentence, { minLength: 1, maxLength: 8 }).map((sentences) => sentences.join(" "));
const heading = fc.tuple(fc.integer({ min: 1, max: 6 }), sentence).map(([level, title]) => `${"#".repeat(level)} ${title}`);
const longRun = fc.oneof(
  fc.string({ unit: fc.constantFrom("a", "b", "=", "漢", "🦊", "7"), minLength: 200, maxLength: 2500 }),
  fc.string({ unit: "grapheme-ascii", minLength: 200, maxLength: 1500 }).map((s) => s.replace(/\s/g, "x")),
  fc.string({ unit: "grapheme", minLength: 100, maxLength: 600 }).map((s) => s.replace(/\s/gu, "")),
);
const separator = fc.constantFrom("\n\n", "\n", " ", "\n\n\n", "\t", " \u00a0", "\r\n\r\n", "\u3000", "\n  \n");
const structured = fc
  .tuple(
    fc.constantFrom("", " ", "\n\n"),
    fc.array(fc.tuple(fc.oneof({ weight: 6, arbitrary: paragraph }, { weight: 2, arbitrary: heading }, { weight: 1, arbitrary: longRun }), separator), {
      minLength: 1,
      maxLength: 10,
    }),
  )
  .map(([lead, blocks]) => lead + blocks.map(([block, sep]) => block + sep).join(""));
const unicodeNoise = fc.oneof(
  fc.string({ unit: "binary", maxLength: 1500 }),
  fc.string({ unit: "grapheme", maxLength: 1500 }),
);
const source = fc.oneof({ weight: 4, arbitrary: structured }, { weight: 1, arbitrary: unicodeNoise });
const options: fc.Arbitrary<ChunkOptions> = fc
  .integer({ min: 8, max: 300 })
  .chain((chunkTokens) =>
    fc.record({
      chunkTokens: fc.constant(chunkTokens),
      overlapTokens: fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 0, max: Math.floor(chunkTokens / 2) }) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: chunkTokens - 1 }) },
      ),
    }),
  );

const HEADING_LINE = /^#{1,6}(?:[ \t\n]|$)/;

/** Whether `chunk` begins a Markdown heading line (where chunks start afresh, without overlap). */
function startsAtHeading(text: string, chunk: Chunk): boolean {
  const before = text.slice(0, chunk.start);
  const gap = before.slice(before.trimEnd().length);
  return gap.includes("\n") && HEADING_LINE.test(text.slice(chunk.start, chunk.start + 7));
}

function checkChunks(text: string, chunks: Chunk[], opts: ChunkOptions): void {
  const trimmedStart = text.length - text.trimStart().length;
  const trimmedEnd = text.trimEnd().length;
  if (trimmedStart >= trimmedEnd) {
    expect(chunks).toEqual([]);
    return;
  }
  expect(chunks.length).toBeGreaterThan(0);
  chunks.forEach((chunk, i) => {
    expect(chunk.index).toBe(i);
    expect(chunk.text).toBe(text.slice(chunk.start, chunk.end));
    expect(chunk.text.length).toBeGreaterThan(0);
    expect(chunk.text).not.toMatch(/^\s|\s$/u);
    expect(chunk.tokens).toBe(countTokens(chunk.text));
    expect(chunk.tokens).toBeLessThanOrEqual(opts.chunkTokens);
  });
  // Coverage, in order: the chunks span the trimmed text and leave out only whitespace.
  expect(chunks[0]!.start).toBe(trimmedStart);
  expect(chunks.at(-1)!.end).toBe(trimmedEnd);
  for (let i = 1; i < chunks.length; i++) {
    const previous = chunks[i - 1]!;
    const chunk = chunks[i]!;
    expect(chunk.start).toBeGreaterThan(previous.start);
    expect(chunk.end).toBeGreaterThan(previous.end);
    if (chunk.start > previous.end) expect(text.slice(previous.end, chunk.start).trim()).toBe("");
    // Overlap, unless the next chunk starts at a heading or the previous one is a single
    // character or token that cannot be repeated in part. (An overlap of more than half a
    // chunk is best effort: it gives way to the next unit.)
    const splittable = previous.tokens > 1 && [...previous.text].length > 1;
    const overlapFits = opts.overlapTokens >= 8 && opts.overlapTokens * 2 <= opts.chunkTokens;
    if (overlapFits && splittable && !startsAtHeading(text, chunk)) {
      expect(chunk.start, `chunk ${i} should overlap chunk ${i - 1}`).toBeLessThan(previous.end);
    }
    if (opts.overlapTokens === 0) expect(chunk.start).toBeGreaterThanOrEqual(previous.end);
  }
  if (countTokens(text.slice(trimmedStart, trimmedEnd)) <= opts.chunkTokens) expect(chunks).toHaveLength(1);
}

describe("chunkText properties", () => {
  it("keeps offsets exact, respects the budget, covers the text in order and overlaps", () => {
    fc.assert(
      fc.property(source, options, (text, opts) => {
        checkChunks(text, chunkText(text, opts), opts);
      }),
      { numRuns: 300 },
    );
  });

  it("holds for texts that always need several chunks", () => {
    fc.assert(
      fc.property(fc.array(structured, { minLength: 3, maxLength: 6 }), fc.integer({ min: 16, max: 64 }), (parts, chunkTokens) => {
        const text = parts.join("\n\n");
        const opts = { chunkTokens, overlapTokens: Math.floor(chunkTokens / 4) };
        checkChunks(text, chunkText(text, opts), opts);
      }),
      { numRuns: 100 },
    );
  });
});
