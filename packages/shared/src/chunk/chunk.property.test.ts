import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkText, type Chunk, type ChunkOptions } from "./chunk.ts";
import { countTokens } from "./tokenizer.ts";

const word = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[A-Za-z]{1,12}$/) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "e.g.",
      "3.5",
      "naïve",
      "ünïcödé",
      "日本語",
      "🦊",
      "👩‍👩‍👧",
      "x\u0301",
      "<|endoftext|>",
      "https://example.com/a?b=c",
      "**bold.**",
      '"quoted."',
    ),
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
const row = fc
  .array(
    fc.oneof(
      sentence,
      fc.array(word, { minLength: 1, maxLength: 3 }).map((w) => w.join(" ")),
    ),
    { minLength: 1, maxLength: 4 },
  )
  .chain((cells) => fc.constantFrom(`| ${cells.join(" | ")} |`, cells.join(" | ")));
const table = fc.array(row, { minLength: 1, maxLength: 6 }).map((rows) => rows.join("\n"));
const codeLine = fc.oneof(
  sentence,
  sentence.map((s) => `# ${s}`),
  fc.constant(""),
  fc.constant("  indented(); // and. More."),
);
const codeBlock = fc
  .tuple(fc.constantFrom("```", "~~~", "````ts"), fc.array(codeLine, { minLength: 0, maxLength: 12 }), fc.boolean())
  .map(([fence, lines, closed]) => [fence, ...lines, ...(closed ? [fence.replace(/[^`~]/g, "")] : [])].join("\n"));
const separator = fc.constantFrom("\n\n", "\n", " ", "\n\n\n", "\t", " \u00a0", "\r\n\r\n", "\u3000", "\n  \n");
const structured = fc
  .tuple(
    fc.constantFrom("", " ", "\n\n"),
    fc.array(
      fc.tuple(
        fc.oneof(
          { weight: 6, arbitrary: paragraph },
          { weight: 2, arbitrary: heading },
          { weight: 1, arbitrary: longRun },
          { weight: 1, arbitrary: table },
          { weight: 1, arbitrary: codeBlock },
        ),
        separator,
      ),
      {
        minLength: 1,
        maxLength: 10,
      },
    ),
  )
  .map(([lead, blocks]) => lead + blocks.map(([block, sep]) => block + sep).join(""));
const unicodeNoise = fc.oneof(fc.string({ unit: "binary", maxLength: 1500 }), fc.string({ unit: "grapheme", maxLength: 1500 }));
const source = fc.oneof({ weight: 4, arbitrary: structured }, { weight: 1, arbitrary: unicodeNoise });
const options: fc.Arbitrary<ChunkOptions> = fc.integer({ min: 8, max: 300 }).chain((chunkTokens) =>
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

/**
 * Where the text holds a table row (a line starting with "|" or holding " | ") or a fenced code
 * block (``` or ~~~, closed by a bare fence of the same character at least as long, or by the
 * end of the text), as [start, end) offsets of their non-whitespace. Written apart from the
 * chunker, line by line, as the specification it must follow.
 */
function structureRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let fence: { marker: string; start: number; end: number } | undefined;
  let lineStart = 0;
  for (const line of text.split("\n")) {
    const content = line.trim();
    const start = lineStart + line.length - line.trimStart().length;
    lineStart += line.length + 1;
    if (content === "") continue;
    if (fence !== undefined) {
      fence.end = start + content.length;
      if (/^(?:`+|~+)$/.test(content) && content.startsWith(fence.marker)) {
        ranges.push([fence.start, fence.end]);
        fence = undefined;
      }
    } else if (/^(?:`{3,}|~{3,})/.test(content)) {
      fence = { marker: /^(?:`+|~+)/.exec(content)![0], start, end: start + content.length };
    } else if (content.startsWith("|") || content.includes(" | ")) {
      ranges.push([start, start + content.length]);
    }
  }
  if (fence !== undefined) ranges.push([fence.start, fence.end]);
  return ranges;
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
  // A table row or code block that fits in a chunk is never cut. It may leave no room for an
  // overlap before it, nor be repeated in part after it.
  const blocks = structureRanges(text);
  const keptWhole = blocks.filter(([from, to]) => countTokens(text.slice(from, to)) <= opts.chunkTokens);
  for (const [from, to] of keptWhole) {
    for (const chunk of chunks) {
      expect(chunk.start > from && chunk.start < to, `chunk ${chunk.index} starts inside [${from}, ${to})`).toBe(false);
      expect(chunk.end > from && chunk.end < to, `chunk ${chunk.index} ends inside [${from}, ${to})`).toBe(false);
    }
  }
  const inBlock = (offset: number) => blocks.some(([from, to]) => offset >= from && offset <= to);
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
    if (overlapFits && splittable && !startsAtHeading(text, chunk) && !inBlock(previous.end) && !inBlock(chunk.start)) {
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

  it("never cuts a table row or code block that fits in a chunk, in documents made of them", () => {
    const plainWord = fc.stringMatching(/^[A-Za-z]{1,10}$/);
    const plainSentence = fc
      .tuple(fc.array(plainWord, { minLength: 1, maxLength: 12 }), fc.constantFrom(".", "!", "?", ""))
      .map(([words, stop]) => words.join(" ") + stop);
    const cell = fc.array(plainSentence, { minLength: 1, maxLength: 3 }).map((s) => s.join(" "));
    const block = fc.oneof(
      fc.array(plainSentence, { minLength: 1, maxLength: 6 }).map((s) => s.join(" ")),
      fc.tuple(fc.integer({ min: 1, max: 3 }), plainSentence).map(([level, title]) => `${"#".repeat(level)} ${title}`),
      fc.array(cell, { minLength: 1, maxLength: 4 }).map((items) => items.map((item) => `- ${item}`).join("\n")),
      fc
        .array(fc.array(cell, { minLength: 2, maxLength: 4 }), { minLength: 1, maxLength: 8 })
        .chain((rows) =>
          fc.constantFrom(
            rows.map((cells) => `| ${cells.join(" | ")} |`),
            rows.map((cells) => cells.join(" | ")),
          ),
        )
        .map((rows) => rows.join("\n")),
      fc
        .tuple(
          fc.constantFrom("```", "~~~sh"),
          fc.array(
            fc.oneof(
              plainSentence,
              plainSentence.map((s) => `# ${s}`),
              fc.constant(""),
            ),
            { maxLength: 20 },
          ),
        )
        .map(([fence, lines]) => [fence, ...lines, fence.slice(0, 3)].join("\n")),
    );
    fc.assert(
      fc.property(
        fc.array(block, { minLength: 2, maxLength: 12 }),
        fc.integer({ min: 16, max: 120 }),
        fc.integer({ min: 0, max: 100 }),
        (blocks, chunkTokens, overlapPercent) => {
          const text = blocks.join("\n\n");
          const opts = { chunkTokens, overlapTokens: Math.floor(((chunkTokens - 1) * overlapPercent) / 100) };
          const chunks = chunkText(text, opts);
          checkChunks(text, chunks, opts);
          // The oracle sees every table and code block the generator wrote.
          const expected =
            blocks.filter((b) => b.startsWith("```") || b.startsWith("~~~")).length +
            blocks.filter((b) => b.includes(" | ")).reduce((n, b) => n + b.split("\n").length, 0);
          expect(structureRanges(text)).toHaveLength(expected);
        },
      ),
      { numRuns: 200 },
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
