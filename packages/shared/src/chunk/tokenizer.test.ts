import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { encode } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens, countTokensWithin, preTokenize, tokenBoundaries } from "./tokenizer.ts";

/** cl100k_base's published pre-tokenizer expression. */
const CL100K_PIECES =
  /'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s/gu;

/**
 * Holds the pre-tokenizer to the published expression and the counts to the library's encoding,
 * on `text`; each text is counted twice (the second time from the warm piece cache).
 */
function agreesWithLibrary(text: fc.Arbitrary<string>, numRuns: number): void {
  fc.assert(
    fc.property(text, fc.integer({ min: 0, max: 80 }), (t, limit) => {
      expect(preTokenize(t)).toEqual(t.match(CL100K_PIECES) ?? []);
      const expected = encode(t, { disallowedSpecial: new Set() }).length;
      expect(countTokens(t)).toBe(expected);
      expect(countTokens(t)).toBe(expected);
      expect(countTokensWithin(t, limit)).toBe(expected <= limit ? expected : false);
    }),
    { numRuns },
  );
}

describe("tokenizer", () => {
  it("counts cl100k_base tokens", () => {
    expect(countTokens("hello world")).toBe(2);
    expect(countTokens("")).toBe(0);
    const prose = "Tokenizers split text into pieces; the embedder's limit is counted in them.";
    expect(countTokens(prose)).toBe(encode(prose).length);
  });

  it("counts exactly what the library encodes, piece cache warm or cold, on any text", () => {
    const word = fc.constantFrom(
      "the",
      " the",
      "The",
      " cat's",
      "'ll",
      "'VE",
      "naïve",
      " über",
      "12345",
      " 7",
      "漢字",
      "🦊",
      "\n",
      "\r\n",
      "  ",
      "\t",
      " \n ",
      "...",
      " ?!",
      "<|endoftext|>",
      "\uFEFF",
      "\uD800",
      "x".repeat(60),
    );
    const text = fc.oneof(
      fc.string({ unit: "binary", maxLength: 200 }),
      fc.string({ unit: "grapheme", maxLength: 200 }),
      fc.array(word, { maxLength: 60 }).map((w) => w.join("")),
    );
    agreesWithLibrary(text, 500);
  });

  it("cuts text as the pre-tokenizer's expression does, on any ASCII text and where ASCII meets other characters", () => {
    // Written out by hand for ASCII: each alternative of the expression, where they meet, and
    // where an ASCII piece would run into a letter, digit, space or mark of another script.
    const fragment = fc.constantFrom(
      ..."'s 'S 'd 'M 't 'll 'lL 'Ll 've 'vE 're 'RE 'x ' '' word Word WORD a 1 123 4567 ! ?! . - _ \" ( ) [ ] {}".split(" "),
      " ",
      "  ",
      "   ",
      "\t",
      "\v",
      "\f",
      "\r",
      "\n",
      "\r\n",
      " \n",
      "\n ",
      " \r\n\t",
      "\x00",
      "\x1f",
      "\x7f",
      " '",
      " 's",
      " !",
      " 12",
      "é",
      "É",
      "\u00a0",
      "\u2028",
      "–",
      "β",
      "٣",
      "漢",
      "🦊",
      "\uFEFF",
      "\uD800",
    );
    const text = fc.oneof(
      fc.string({ unit: "binary-ascii", maxLength: 300 }),
      fc.array(fragment, { maxLength: 80 }).map((f) => f.join("")),
    );
    agreesWithLibrary(text, 2000);
  });

  it("leaves a piece that runs into another script's letter, digit or space to the expression", () => {
    for (const t of [" \n \t\uFEFF", "naïve", "word\u00e9s", "  \u00a0x", "12٣4", "'ʼs", "a\u2028b", "!!–!", " \uD800x"]) {
      expect(preTokenize(t)).toEqual(t.match(CL100K_PIECES));
    }
  });

  it("cuts a run longer than 1,000 characters wherever it lies in the text, and only such a run", () => {
    const lib = (t: string) => encode(t, { disallowedSpecial: new Set() }).length;
    const prose = fc
      .array(fc.constantFrom("cells", "of", "the", "immune", "system,", "12", "(n=40)."), { maxLength: 300 })
      .map((w) => w.join(" "));
    fc.assert(
      fc.property(prose, prose, fc.integer({ min: 900, max: 1200 }), fc.constantFrom("x", "-", "\t"), (before, after, length, unit) => {
        const edge = unit === "\t" ? "." : " "; // of another class, so that the run is `length` long
        const head = before + edge;
        const text = head + unit.repeat(length) + edge + after;
        // The run is cut after its first 1,000 characters: the tokens of both sides.
        const cut = head.length + 1000;
        const expected = length > 1000 ? lib(text.slice(0, cut)) + lib(text.slice(cut)) : lib(text);
        expect(countTokens(text)).toBe(expected);
      }),
      { numRuns: 60 },
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
      expect(
        code >= 0xdc00 &&
          code <= 0xdfff &&
          b.offset < text.length &&
          text.charCodeAt(b.offset - 1) >= 0xd800 &&
          text.charCodeAt(b.offset - 1) <= 0xdbff,
      ).toBe(false);
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
