import { strFromU8, strToU8, unzipSync, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { makePptx, SAMPLE_SLIDES, SAMPLE_SLIDE_TEXTS } from "../../../test-support/office-fixtures.ts";
import { extractPptx } from "./pptx.ts";
import { ExtractionError } from "../../errors.ts";

/** Rewrites parts of a PPTX. */
function edit(pptx: Uint8Array, change: (files: Record<string, string>) => void): Uint8Array {
  const files = unzipSync(pptx);
  const xml = Object.fromEntries(
    Object.entries(files)
      .filter(([name]) => /\.(xml|rels)$/.test(name))
      .map(([name, data]) => [name, strFromU8(data)]),
  );
  change(xml);
  for (const [name, text] of Object.entries(xml)) files[name] = strToU8(text);
  return zipSync(files);
}

describe("extractPptx", () => {
  it("gives one section per slide: the title as a heading, paragraphs, table rows, then the notes", async () => {
    const extracted = extractPptx(await makePptx());
    expect(extracted.sections.map((s) => s.slide)).toEqual([1, 2, 3]);
    expect(extracted.sections.map((s) => extracted.text.slice(s.start, s.end))).toEqual(SAMPLE_SLIDE_TEXTS);
    expect(extracted.text).toBe(SAMPLE_SLIDE_TEXTS.join("\n\n"));
  });

  it("numbers slides in presentation order, not by part name", async () => {
    const pptx = edit(await makePptx(), (files) => {
      const presentation = files["ppt/presentation.xml"]!;
      files["ppt/presentation.xml"] = presentation.replace(
        /<p:sldIdLst>(<p:sldId [^>]*\/>)(<p:sldId [^>]*\/>)(<p:sldId [^>]*\/>)/,
        "<p:sldIdLst>$3$1$2",
      );
    });
    const extracted = extractPptx(pptx);
    expect(extracted.sections.map((s) => extracted.text.slice(s.start, s.end))).toEqual([
      SAMPLE_SLIDE_TEXTS[2],
      SAMPLE_SLIDE_TEXTS[0],
      SAMPLE_SLIDE_TEXTS[1],
    ]);
    expect(extracted.sections.map((s) => s.slide)).toEqual([1, 2, 3]);
  });

  it("falls back to the numbers in slide part names", async () => {
    const slides = Array.from({ length: 11 }, (_, i) => ({ title: `Slide ${i + 1}` }));
    const pptx = edit(await makePptx(slides), (files) => {
      files["ppt/presentation.xml"] = files["ppt/presentation.xml"]!.replace(/<p:sldIdLst>.*<\/p:sldIdLst>/, "");
    });
    const extracted = extractPptx(pptx);
    expect(extracted.text.split("\n\n")).toEqual(slides.map((s) => `# ${s.title}`));
    expect(extracted.sections.at(-1)?.slide).toBe(11);
  });

  it("leaves out slide numbers and dates, and the notes page's copy of the slide", async () => {
    const pptx = edit(await makePptx([SAMPLE_SLIDES[0]!]), (files) => {
      const noise = `<p:sp><p:nvSpPr><p:cNvPr id="9" name="n"/><p:cNvSpPr/><p:nvPr><p:ph type="sldNum"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:fld type="slidenum"><a:t>1</a:t></a:fld></a:p></p:txBody></p:sp>`;
      files["ppt/slides/slide1.xml"] = files["ppt/slides/slide1.xml"]!.replace("</p:spTree>", `${noise}</p:spTree>`);
    });
    expect(extractPptx(pptx).text).toBe(SAMPLE_SLIDE_TEXTS[0]);
  });

  it("fails a presentation without text", async () => {
    await expect(makePptx([{ title: " " }]).then(extractPptx)).rejects.toThrow(new ExtractionError("no extractable text"));
  });
});
