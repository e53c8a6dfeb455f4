import { describe, expect, it } from "vitest";
import { chunkText, DEFAULT_CHUNK_OVERLAP_TOKENS, DEFAULT_CHUNK_TOKENS, type Chunk } from "./chunk.ts";
import { countTokens } from "./tokenizer.ts";

/** Sentences of about 15 tokens: "Sentence 3 of part b talks about printers, queues and drivers." */
function sentence(i: number, tag: string): string {
  return `Sentence ${i} of part ${tag} talks about printers, queues and drivers.`;
}
function paragraph(count: number, tag: string): string {
  return Array.from({ length: count }, (_, i) => sentence(i, tag)).join(" ");
}

function expectWellFormed(source: string, chunks: Chunk[], chunkTokens: number): void {
  chunks.forEach((chunk, i) => {
    expect(chunk.index).toBe(i);
    expect(chunk.text).toBe(source.slice(chunk.start, chunk.end));
    expect(chunk.tokens).toBe(countTokens(chunk.text));
    expect(chunk.tokens).toBeLessThanOrEqual(chunkTokens);
    expect(chunk.text).toBe(chunk.text.trim());
  });
}

describe("chunkText", () => {
  it("exports the defaults", () => {
    expect(DEFAULT_CHUNK_TOKENS).toBe(512);
    expect(DEFAULT_CHUNK_OVERLAP_TOKENS).toBe(64);
  });

  it("returns nothing for empty or whitespace-only text", () => {
    expect(chunkText("", { chunkTokens: 512, overlapTokens: 64 })).toEqual([]);
    expect(chunkText(" \n\t\u00a0\u3000\n", { chunkTokens: 512, overlapTokens: 64 })).toEqual([]);
  });

  it("returns one chunk covering the trimmed text when it fits", () => {
    const source = "\n\n  Short note.\n\nSecond paragraph.  \n";
    expect(chunkText(source, { chunkTokens: 512, overlapTokens: 64 })).toEqual([
      { index: 0, text: "Short note.\n\nSecond paragraph.", start: 4, end: 34, tokens: countTokens("Short note.\n\nSecond paragraph.") },
    ]);
  });

  it("ends chunks at paragraph breaks when paragraphs fit", () => {
    const paragraphs = ["a", "b", "c", "d", "e", "f"].map((tag) => paragraph(4, tag));
    const source = paragraphs.join("\n\n");
    const chunks = chunkText(source, { chunkTokens: 150, overlapTokens: 20 });
    expectWellFormed(source, chunks, 150);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks.slice(0, -1)) expect(source.slice(chunk.end, chunk.end + 2)).toBe("\n\n");
  });

  it("ends chunks at sentence ends inside a long paragraph", () => {
    const source = paragraph(60, "long");
    const chunks = chunkText(source, { chunkTokens: 100, overlapTokens: 0 });
    expectWellFormed(source, chunks, 100);
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) {
      expect(chunk.text).toMatch(/^Sentence \d+ /);
      expect(chunk.text).toMatch(/drivers\.$/);
    }
  });

  it("starts a new chunk at each Markdown heading it can", () => {
    const sections = ["Install", "Configure", "Operate", "Troubleshoot"].map(
      (title, i) => `## ${title}\n\n${paragraph(3, `${i}a`)}\n\n${paragraph(2, `${i}b`)}`,
    );
    const source = `# Runbook\n\n${sections.join("\n\n")}`;
    const chunks = chunkText(source, { chunkTokens: 120, overlapTokens: 20 });
    expectWellFormed(source, chunks, 120);
    // "# Runbook" and "## Install" share the first chunk: a title alone would be a useless chunk.
    expect(chunks[0]!.text).toMatch(/^# Runbook\n\n## Install\n/);
    for (const title of ["Configure", "Operate", "Troubleshoot"]) {
      const at = source.indexOf(`## ${title}`);
      expect(chunks.some((c) => c.start === at)).toBe(true);
      // No chunk reaches across a heading: each one starts at it or after it.
      for (const chunk of chunks) expect(chunk.start < at && chunk.end > at).toBe(false);
    }
  });

  it("starts a chunk at each heading of sections longer than a chunk, without overlap from before it", () => {
    const titles = ["Alpha", "Beta", "Gamma"];
    const source = titles.map((title, i) => `## ${title}\n\n${paragraph(6, `${i}a`)}\n\n${paragraph(6, `${i}b`)}`).join("\n\n");
    const chunks = chunkText(source, { chunkTokens: 100, overlapTokens: 30 });
    expectWellFormed(source, chunks, 100);
    for (const title of titles) {
      const at = source.indexOf(`## ${title}`);
      expect(chunks.some((c) => c.start === at)).toBe(true);
      for (const chunk of chunks) expect(chunk.start < at && chunk.end > at).toBe(false);
    }
  });

  it("does not take # lines in fenced code for headings", () => {
    const code = Array.from({ length: 40 }, (_, i) => (i % 4 === 0 ? `# step ${i}` : `run --flag ${i}`)).join("\n");
    const source = `Intro text.\n\n\`\`\`sh\n${code}\n\`\`\``;
    const chunks = chunkText(source, { chunkTokens: 60, overlapTokens: 0 });
    expectWellFormed(source, chunks, 60);
    // Cuts are chosen by fill, not forced before every "# step" line.
    expect(chunks.filter((c) => c.text.startsWith("# step")).length).toBeLessThan(10);
  });

  it("overlaps consecutive chunks by about the overlap, with whole sentences when they fit", () => {
    const source = paragraph(80, "x");
    const chunks = chunkText(source, { chunkTokens: 120, overlapTokens: 40 });
    expectWellFormed(source, chunks, 120);
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1]!;
      const chunk = chunks[i]!;
      expect(chunk.start).toBeLessThan(previous.end);
      const shared = source.slice(chunk.start, previous.end);
      expect(countTokens(shared)).toBeLessThanOrEqual(40);
      expect(shared).toMatch(/^Sentence \d+ .*drivers\.$/);
    }
  });

  it("does not overlap when overlapTokens is 0", () => {
    const source = paragraph(50, "y");
    const chunks = chunkText(source, { chunkTokens: 100, overlapTokens: 0 });
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.start).toBeGreaterThanOrEqual(chunks[i - 1]!.end);
  });

  it("splits words only inside a run with no whitespace", () => {
    const run = `https://example.com/${"abcdefghij".repeat(400)}`;
    const source = `See ${run} for details.`;
    const chunks = chunkText(source, { chunkTokens: 200, overlapTokens: 20 });
    expectWellFormed(source, chunks, 200);
    expect(chunks[0]!.text.startsWith("See https://example.com/")).toBe(true);
    expect(chunks.at(-1)!.text.endsWith("for details.")).toBe(true);
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.start).toBeLessThan(chunks[i - 1]!.end);
  });

  it("splits unspaced CJK text at its sentence stops", () => {
    const source = "東京の天気は晴れで、気温は二十度です。".repeat(40);
    const chunks = chunkText(source, { chunkTokens: 100, overlapTokens: 0 });
    expectWellFormed(source, chunks, 100);
    for (const chunk of chunks) expect(chunk.text.endsWith("。")).toBe(true);
  });

  it("handles emoji and surrogate pairs without splitting a character", () => {
    const source = "🦊🐻‍❄️👩‍👩‍👧 ".repeat(30) + "🦊".repeat(300);
    const chunks = chunkText(source, { chunkTokens: 50, overlapTokens: 10 });
    expectWellFormed(source, chunks, 50);
    for (const chunk of chunks) expect(chunk.text.isWellFormed()).toBe(true);
  });

  it("accepts an overlap of more than half a chunk, shrinking it where the next unit needs room", () => {
    const source = paragraph(40, "z");
    const chunks = chunkText(source, { chunkTokens: 60, overlapTokens: 50 });
    expectWellFormed(source, chunks, 60);
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.end).toBeGreaterThan(chunks[i - 1]!.end);
  });

  it("treats special-token markers as text", () => {
    const source = `${"<|endoftext|> ".repeat(100)}end`;
    expectWellFormed(source, chunkText(source, { chunkTokens: 64, overlapTokens: 8 }), 64);
  });

  it("rejects options it cannot honour", () => {
    expect(() => chunkText("x", { chunkTokens: 4, overlapTokens: 0 })).toThrow(RangeError);
    expect(() => chunkText("x", { chunkTokens: 100, overlapTokens: 100 })).toThrow(RangeError);
    expect(() => chunkText("x", { chunkTokens: 100.5, overlapTokens: 0 })).toThrow(RangeError);
    expect(() => chunkText("x", { chunkTokens: 100, overlapTokens: -1 })).toThrow(RangeError);
  });
});
