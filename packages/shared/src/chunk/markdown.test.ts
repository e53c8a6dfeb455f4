import { describe, expect, it } from "vitest";
import { headings, readLine } from "./markdown.ts";
import { BREAK, splitSentences } from "./segment.ts";
import { citeChunks } from "./citations.ts";

/** Offsets where the sentence splitter puts a heading break. */
const headingBreaks = (text: string) =>
  splitSentences(text, 0, text.length)
    .filter((s, i) => i > 0 && s.level === BREAK.heading)
    .map((s) => s.start);

describe("one Markdown reader for chunk breaks and heading paths", () => {
  it("reads ATX headings with their level and title, closing hashes dropped", () => {
    expect(readLine("## Part two ##", 0, 14, undefined).heading).toEqual({ at: 0, level: 2, title: "Part two" });
    expect(readLine("#hashtag", 0, 8, undefined).heading).toBeNull();
    expect(readLine("####### seven", 0, 13, undefined).heading).toBeNull();
  });

  it("a ``` line inside a ~~~ block neither closes it nor lets a # line inside be a heading", () => {
    const text = "# Top\n\nIntro.\n\n~~~\n```\n# not a heading\n```\n~~~\n\n## Real\n\nBody text.";
    expect(headings(text).map((h) => h.title)).toEqual(["Top", "Real"]);
    expect(headingBreaks(text)).toEqual([text.indexOf("## Real")]);
    const [cite] = citeChunks(text, [], [{ start: text.indexOf("Body") }]);
    expect(cite!.headingPath).toEqual(["Top", "Real"]);
  });

  it("agrees on every heading break and heading, whatever the fences", () => {
    const parts = [
      "# A",
      "text.",
      "```",
      "# in code",
      "~~~",
      "```",
      "## B",
      "~~~~",
      "### in tilde",
      "~~~",
      "~~~~",
      "#### C",
      "    # indented",
    ];
    for (let seed = 0; seed < 200; seed++) {
      let x = seed;
      const lines = Array.from({ length: 12 }, () => parts[(x = (x * 1103515245 + 12345) % 2 ** 31) % parts.length]!);
      const text = lines.join("\n").trim(); // the splitter takes trimmed text, as the chunker gives it
      const fromHeadings = headings(text)
        .map((h) => h.at)
        .filter((at) => at > 0);
      expect(headingBreaks(text), text).toEqual(fromHeadings);
    }
  });
});
