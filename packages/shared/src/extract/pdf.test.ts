import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeCjkPdf, makePdf, makeScannedPdf } from "../../test-support/pdf-fixture.ts";
import { extractPdf, pageText } from "./pdf.ts";
import { ExtractionError } from "../errors.ts";

const FIXTURES = path.resolve(import.meta.dirname, "../../../../test/fixtures");
const PHRASE = "the heron nests only on the third page";

function fivePages(): string[][] {
  return [1, 2, 3, 4, 5].map((n) => [
    `Chapter ${n}`,
    "",
    `Page ${n} opens with a paragraph long enough to wrap across several lines of the page, `.repeat(4),
    "",
    n === 3 ? `A closing line says ${PHRASE}.` : `A closing line on page ${n}.`,
  ]);
}

/** The reason an extraction failed with; fails the test if it did not fail as a document error. */
async function reason(bytes: Uint8Array): Promise<string> {
  const err = await extractPdf(bytes).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ExtractionError);
  return (err as ExtractionError).message;
}

/** Deterministic noise, so a failure can be replayed. */
function noise(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

describe("extractPdf", () => {
  it("gives one section per page, numbered from 1, and finds a phrase on page 3", async () => {
    const bytes = await makePdf(fivePages());
    const { text, sections } = await extractPdf(bytes);
    expect(sections.map((s) => s.page)).toEqual([1, 2, 3, 4, 5]);
    const third = sections[2]!;
    expect(text.slice(third.start, third.end)).toContain(PHRASE);
    const at = text.indexOf(PHRASE);
    expect(at).toBeGreaterThanOrEqual(third.start);
    expect(at + PHRASE.length).toBeLessThanOrEqual(third.end);
    expect(text.indexOf(PHRASE, at + 1)).toBe(-1);
    // Each page starts with its heading, then a blank line before the wrapped paragraph.
    expect(text.slice(third.start, third.end)).toMatch(/^Chapter 3\n\nPage 3 opens with a paragraph/);
    // The caller's bytes are still whole (pdf.js detaches the buffer it is given).
    expect(bytes.byteLength).toBeGreaterThan(0);
    expect(String.fromCharCode(...bytes.subarray(0, 5))).toBe("%PDF-");
  });

  it("keeps wrapped lines apart and words whole", async () => {
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    const { text } = await extractPdf(await makePdf([[long]]));
    expect(text.split("\n").length).toBeGreaterThan(1);
    expect(text.replace(/\n/g, " ")).toBe(long);
  });

  it("skips blank pages but keeps the other pages' numbers", async () => {
    const { text, sections } = await extractPdf(await makePdf([["first page"], [], ["third page"]]));
    expect(sections.map((s) => [s.page, text.slice(s.start, s.end)])).toEqual([
      [1, "first page"],
      [3, "third page"],
    ]);
  });

  it("reads Japanese text whose font is not embedded, through the bundled CMap files", async () => {
    const { text, sections } = await extractPdf(makeCjkPdf("日本語の文書"));
    expect(text).toBe("日本語の文書");
    expect(sections).toEqual([{ page: 1, start: 0, end: 6 }]);
  });

  it("stops when its signal is aborted, with the signal's reason", async () => {
    const bytes = await makePdf(fivePages());
    await expect(extractPdf(bytes, { signal: AbortSignal.abort(new Error("extraction timed out")) })).rejects.toThrow(
      "extraction timed out",
    );
  });

  it("fails a PDF with no text layer (a scan) as having no extractable text", async () => {
    expect(await reason(await makeScannedPdf())).toBe("no extractable text");
  });

  it("fails an encrypted PDF", async () => {
    const bytes = new Uint8Array(readFileSync(path.join(FIXTURES, "encrypted.pdf")));
    expect(await reason(bytes)).toBe("encrypted PDF");
  });

  it("fails a truncated PDF as corrupt", async () => {
    const whole = await makePdf(fivePages());
    expect(await reason(whole.subarray(0, Math.floor(whole.length * 0.6)))).toMatch(/^corrupt or truncated PDF: /);
  });

  it("fails random bytes, an empty file and a bare header as corrupt", async () => {
    expect(await reason(noise(4096, 42))).toMatch(/^corrupt or truncated PDF: /);
    expect(await reason(new Uint8Array(0))).toMatch(/^corrupt or truncated PDF: /);
    expect(await reason(new TextEncoder().encode("%PDF-1.7\n%%EOF\n"))).toMatch(/^corrupt or truncated PDF: /);
  });
});

describe("pageText", () => {
  const run = (str: string, y: number, hasEOL = false, height = 10) => ({
    str,
    transform: [height, 0, 0, height, 72, y],
    height,
    width: 0,
    hasEOL,
  });

  it("breaks lines at hasEOL and where the baseline moves, and leaves a blank line at a wide gap", () => {
    const items = [run("one ", 700), run("line", 700, true), run("next", 688), { type: "beginMarkedContent" }, run("after a gap", 650)];
    expect(pageText(items)).toBe("one line\nnext\n\nafter a gap");
  });

  it("keeps a superscript on its line", () => {
    expect(pageText([run("E = mc", 700), run("2", 704, false, 6), run(" holds", 700)])).toBe("E = mc2 holds");
  });
});
