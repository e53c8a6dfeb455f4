import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { makeDocx, SAMPLE_DOCUMENT_TEXT } from "../../../test-support/office-fixtures.ts";
import { extractDocx } from "./docx.ts";
import { ExtractionError } from "../../errors.ts";

const NS =
  'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"';

/** A minimal DOCX around a body, its main part named by _rels/.rels as Word Online may do. */
function docxOf(body: string, encode: (xml: string) => Uint8Array = strToU8): Uint8Array {
  const rels = `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document2.xml"/></Relationships>`;
  return zipSync({
    "[Content_Types].xml": strToU8("<Types/>"),
    "_rels/.rels": strToU8(rels),
    "word/document2.xml": encode(`<?xml version="1.0" encoding="UTF-8"?><w:document ${NS}><w:body>${body}</w:body></w:document>`),
  });
}

const p = (text: string, pPr = "") => `<w:p>${pPr && `<w:pPr>${pPr}</w:pPr>`}<w:r><w:t>${text}</w:t></w:r></w:p>`;

describe("extractDocx", () => {
  it("writes headings as Markdown, resolving style ids through styles.xml, and table rows as lines", async () => {
    const extracted = extractDocx(await makeDocx());
    expect(extracted.text).toBe(SAMPLE_DOCUMENT_TEXT);
    expect(extracted.sections).toEqual([{ start: 0, end: SAMPLE_DOCUMENT_TEXT.length }]);
  });

  it("keeps tabs, breaks, lists, insertions and outline levels; drops deletions, TOC entries and fallbacks", () => {
    const body = [
      `<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr><w:r><w:t>Name</w:t><w:tab/><w:t>Ada</w:t><w:br/><w:t xml:space="preserve">second line &amp; more</w:t></w:r></w:p>`,
      p("Outlined", `<w:outlineLvl w:val="2"/>`),
      p("Outlined\t3", `<w:pStyle w:val="TOC1"/>`),
      p("An item", `<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>`),
      `<w:p><w:r><w:t>Kept</w:t></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del><w:moveFrom><w:r><w:t>moved</w:t></w:r></w:moveFrom><w:ins><w:r><w:t xml:space="preserve"> inserted</w:t></w:r></w:ins></w:p>`,
      `<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><w:txbxContent>${p("Boxed")}</w:txbxContent></w:drawing></mc:Choice>` +
        `<mc:Fallback><w:pict><w:txbxContent>${p("Boxed")}</w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r><w:r><w:t>after the box</w:t></w:r></w:p>`,
      `<w:tbl><w:tr><w:tc>${p("a")}${p("b")}</w:tc><w:tc><w:tbl><w:tr><w:tc>${p("n1")}</w:tc><w:tc>${p("n2")}</w:tc></w:tr></w:tbl></w:tc><w:tc>${p("")}</w:tc></w:tr></w:tbl>`,
    ].join("");
    expect(extractDocx(docxOf(body)).text).toBe(
      ["Name\tAda\nsecond line & more", "### Outlined", "- An item", "Kept inserted", "Boxed after the box", "a b | n1 | n2"].join("\n\n"),
    );
  });

  it("reads UTF-16 parts", () => {
    const utf16 = (xml: string) => new Uint8Array(Buffer.from(`\ufeff${xml.replace('encoding="UTF-8"', 'encoding="UTF-16"')}`, "utf16le"));
    expect(extractDocx(docxOf(p("Grüße"), utf16)).text).toBe("Grüße");
  });

  it("fails a document without text, or without a body", () => {
    expect(() => extractDocx(docxOf(p("  ")))).toThrow(new ExtractionError("no extractable text"));
    const noBody = zipSync({ "[Content_Types].xml": strToU8("<Types/>") });
    expect(() => extractDocx(noBody)).toThrow(/^corrupt or truncated file: no word\/document\.xml/);
  });

  it("fails a truncated DOCX as corrupt", async () => {
    const docx = await makeDocx();
    for (const length of [docx.length - 1, Math.floor(docx.length * 0.6), 100]) {
      expect(() => extractDocx(docx.subarray(0, length))).toThrow(/^corrupt or truncated file: /);
    }
  });
});
