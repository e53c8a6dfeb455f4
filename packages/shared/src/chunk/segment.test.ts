import { describe, expect, it } from "vitest";
import { BREAK, splitSentences, splitWords } from "./segment.ts";

function sentences(text: string) {
  return splitSentences(text, 0, text.length).map((s) => [text.slice(s.start, s.end), s.level]);
}

describe("splitSentences", () => {
  it("breaks at sentence ends, line breaks, blank lines and headings", () => {
    const text = "# Title\nFirst one. Second one! e.g. not here.\nNext line\n\nNew paragraph.\n## Sub\nBody";
    expect(sentences(text)).toEqual([
      ["# Title", BREAK.heading],
      ["First one.", BREAK.sentence],
      ["Second one! e.g. not here.", BREAK.sentence],
      ["Next line", BREAK.sentence],
      ["New paragraph.", BREAK.paragraph],
      ["## Sub", BREAK.heading],
      ["Body", BREAK.sentence],
    ]);
  });

  it("ignores # lines inside fenced code", () => {
    const text = "Intro\n\n```sh\n# install\nnpm i\n```\n\n# Real heading";
    const levels = sentences(text);
    expect(levels).toContainEqual(["# install", BREAK.sentence]);
    expect(levels).toContainEqual(["# Real heading", BREAK.heading]);
  });

  it("does not take #hashtags for headings", () => {
    expect(sentences("Tagged\n#urgent today")).toEqual([
      ["Tagged", BREAK.heading],
      ["#urgent today", BREAK.sentence],
    ]);
  });

  it("splits CJK sentences that have no space after the stop", () => {
    expect(sentences("今日は晴れです。明日は雨です！本当？")).toEqual([
      ["今日は晴れです。", BREAK.heading],
      ["明日は雨です！", BREAK.sentence],
      ["本当？", BREAK.sentence],
    ]);
  });

  it("keeps a table row in one span, whether it starts with | or only holds | cells", () => {
    const text = "Prices. See below.\n| Plan | Notes |\n| Pro | Ends here. Then more. |\nBasic | Cheap. Slow.";
    const spans = splitSentences(text, 0, text.length);
    expect(spans.map((s) => text.slice(s.start, s.end))).toEqual([
      "Prices.",
      "See below.",
      "| Plan | Notes |",
      "| Pro | Ends here. Then more. |",
      "Basic | Cheap. Slow.",
    ]);
    const rows = ["| Plan", "| Pro", "Basic |"].map((row) => text.indexOf(row));
    expect(spans.map((s) => s.group)).toEqual([undefined, undefined, ...rows]);
  });

  it("groups the lines of a fenced code block, blank lines included, without sentence breaks", () => {
    const text = "Intro. Text.\n\n~~~py\n# Step one. Then two.\n\nx = 1. Done.\n```\n~~~\nAfter. This.";
    const spans = splitSentences(text, 0, text.length);
    const open = text.indexOf("~~~py");
    expect(spans.map((s) => [text.slice(s.start, s.end), s.level, s.group])).toEqual([
      ["Intro.", BREAK.heading, undefined],
      ["Text.", BREAK.sentence, undefined],
      ["~~~py", BREAK.paragraph, open],
      ["# Step one. Then two.", BREAK.sentence, open],
      ["x = 1. Done.", BREAK.paragraph, open],
      // A ``` line does not close a ~~~ fence.
      ["```", BREAK.sentence, open],
      ["~~~", BREAK.sentence, open],
      ["After.", BREAK.sentence, undefined],
      ["This.", BREAK.sentence, undefined],
    ]);
  });

  it("runs an unclosed fence to the end of the text", () => {
    const text = "```\ncode. More.\n# not a heading";
    expect(new Set(splitSentences(text, 0, text.length).map((s) => s.group))).toEqual(new Set([0]));
  });

  it("keeps closing quotes with their sentence", () => {
    expect(sentences('He said "stop." Then left.').map(([s]) => s)).toEqual(['He said "stop."', "Then left."]);
  });
});

describe("splitWords", () => {
  it("splits at whitespace and keeps the span's level on the first word", () => {
    const text = "xx alpha\tbeta  gamma yy";
    const words = splitWords(text, { start: 3, end: 20, level: BREAK.paragraph });
    expect(words.map((w) => [text.slice(w.start, w.end), w.level])).toEqual([
      ["alpha", BREAK.paragraph],
      ["beta", BREAK.word],
      ["gamma", BREAK.word],
    ]);
  });
});
