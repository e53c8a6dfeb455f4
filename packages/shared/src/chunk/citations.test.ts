import { describe, expect, it } from "vitest";
import { citeChunks } from "./citations.ts";
import { joinSections } from "../extract/types.ts";

describe("citeChunks", () => {
  it("gives each chunk the heading path above it, ignoring code blocks", () => {
    const text = "# Guide\nintro\n## Install\nsteps\n```\n# not a heading\n```\n## Use\nrun it\n# Appendix\nmore";
    const at = (s: string) => text.indexOf(s);
    const cites = citeChunks(
      text,
      [],
      [{ start: 0 }, { start: at("steps") }, { start: at("not a") }, { start: at("## Use") }, { start: at("more") }],
    );
    expect(cites.map((c) => c.headingPath)).toEqual([
      ["Guide"],
      ["Guide", "Install"],
      ["Guide", "Install"],
      ["Guide", "Use"],
      ["Appendix"],
    ]);
  });

  it("gives each chunk the page, sheet or slide where it starts", () => {
    const { text, sections } = joinSections([
      { text: "page one text", at: { page: 1 } },
      { text: "page two text", at: { page: 2 } },
      { text: "page three text", at: { page: 3 } },
    ]);
    const cites = citeChunks(text, sections, [{ start: 0 }, { start: text.indexOf("two") }, { start: text.indexOf("page three") }]);
    expect(cites.map((c) => c.page)).toEqual([1, 2, 3]);
    const sheets = joinSections([
      { text: "a: 1", at: { sheet: "Q1" } },
      { text: "b: 2", at: { sheet: "Q2" } },
    ]);
    expect(citeChunks(sheets.text, sheets.sections, [{ start: sheets.text.indexOf("b:") }])).toEqual([{ sheet: "Q2" }]);
  });
});
