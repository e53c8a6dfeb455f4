import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { encode } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens, countTokensWithin, tokenBoundaries } from "./tokenizer.ts";

describe("tokenizer", () => {
  it("counts cl100k_base tokens", () => {
    expect(countTokens("hello world")).toBe(2);
    expect(countTokens("")).toBe(0);
    const prose = "Tokenizers split text into pieces; the embedder's limit is counted in them.";
    expect(countTokens(prose)).toBe(encode(prose).length);
  });

  it("counts exactly what the library encodes, piece cache warm or cold, on any text", () => {
    const word = fc.constantFrom("the", " the", "The", " cat's", "'ll", "'VE", "naïve", " über", "12345", " 7", "漢字", "🦊", "\n", "\r\n", "  ", "\t", " \n ", "...", " ?!", "<|endoftext|>", "\uFEFF", "\uD800", "x".repeat(60));
    const text = fc.oneof(
      fc.string({ unit: "binary", maxLength: 200 }),
      fc.string({ unit: "grapheme", maxLength: 200 }),
      fc.array(word, { maxLength: 60 }).map((w) => w.join("")),
    );
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 80 }), (t, limit) => {
        const expected = encode(t, { disallowedSpecial: new Set() }).length;
        expect(countTokens(t)).toBe(expected);
        expect(countTokens(t)).toBe(expected);
        expect(countTokensWithin(t, limit)).toBe(expected <= limit ? expected : false);
      }),
      { numRuns: 500 },
    );
  });

  it("treats special-token markers in documents as text instead of throwing", () => {
    expect(countTokens("before <|endoftext|> after")).toBeGreaterThan(3);
    expect(countTokensWithin("<|im_start|>", 100)).toBeGreaterThan(1);
  });

  it("answers whether a text fits a limit, with its count", () => {
    expect(countTokensWithin("hello world", 2)).toBe(2);
    expect(countTokensWithin("hello world", 1)).toBe(false);
    const long = "word ".repeat(5000);
    expect(countTokensWithin(long, 100)).toBe(false);
    expect(countTokensWithin(long, 10_000)).toBe(countTokens(long));
  });

  it("counts unbroken runs in bounded time (blockwise past 1,000 characters)", () => {
    // Plain BPE needs seconds for these; blockwise it is milliseconds.
    const run = "a".repeat(200_000);
    const count = countTokens(run);
    expect(count).toBeGreaterThan(200_000 / 16);
    expect(countTokensWithin(run, 512)).toBe(false);
    expect(countTokens("漢字".repeat(50_000))).toBeGreaterThan(50_000);
  });

  it("finds token boundaries at whole characters, ending at the end of the text", () => {
    const text = "Fox 🦊 über straße 漢字 \uFEFFmid-BOM, lone \uD800 surrogate";
    const boundaries = tokenBoundaries(text);
    expect(boundaries.at(-1)).toEqual({ tokens: encode(text, { disallowedSpecial: new Set() }).length, offset: text.length });
    let previous = { tokens: 0, offset: 0 };
    for (const b of boundaries) {
      expect(b.offset).toBeGreaterThan(previous.offset);
      expect(b.tokens).toBeGreaterThan(previous.tokens);
      const code = text.charCodeAt(b.offset);
      expect(code >= 0xdc00 && code <= 0xdfff && b.offset < text.length && text.charCodeAt(b.offset - 1) >= 0xd800 && text.charCodeAt(b.offset - 1) <= 0xdbff).toBe(false);
      previous = b;
    }
  });

  it("keeps offsets right for a text starting with U+FEFF", () => {
    // Whether or not the tokenizer's shared decoder swallows it, the boundaries must end at the end.
    const boundaries = tokenBoundaries("\uFEFFabc def");
    expect(boundaries.at(-1)!.offset).toBe(8);
  });

  it("finds token boundaries across blocks of a long run", () => {
    const text = "x".repeat(2500);
    const boundaries = tokenBoundaries(text);
    expect(boundaries.at(-1)!.offset).toBe(2500);
    expect(boundaries.at(-1)!.tokens).toBe(countTokens(text));
  });
});
