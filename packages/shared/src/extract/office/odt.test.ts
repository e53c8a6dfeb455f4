import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { makeOdt, SAMPLE_DOCUMENT_TEXT } from "../../../test-support/office-fixtures.ts";
import { extractOdt } from "./odt.ts";
import { ExtractionError } from "../../errors.ts";

const NS = [
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"',
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"',
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"',
].join(" ");

function odtOf(body: string, manifest = "<manifest:manifest/>"): Uint8Array {
  return zipSync({
    mimetype: [strToU8("application/vnd.oasis.opendocument.text"), { level: 0 }],
    "META-INF/manifest.xml": strToU8(manifest),
    "content.xml": strToU8(
      `<office:document-content ${NS}><office:body><office:text>${body}</office:text></office:body></office:document-content>`,
    ),
  });
}

describe("extractOdt", () => {
  it("writes text:h at its outline level as Markdown headings and table rows as lines", () => {
    const extracted = extractOdt(makeOdt());
    expect(extracted.text).toBe(SAMPLE_DOCUMENT_TEXT);
    expect(extracted.sections).toEqual([{ start: 0, end: SAMPLE_DOCUMENT_TEXT.length }]);
  });

  it("collapses markup whitespace, keeps text:s, tabs and line breaks, lists; drops notes, comments and the TOC", () => {
    const body = [
      `<text:table-of-content><text:index-body><text:p>Intro<text:tab/>1</text:p></text:index-body></text:table-of-content>`,
      `<text:h text:outline-level="2">Intro</text:h>`,
      `<text:p>One\n   two<text:s text:c="3"/>three<text:tab/>four<text:line-break/><text:span>five</text:span></text:p>`,
      `<text:p>Cited<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>A note</text:p></text:note-body></text:note>.<office:annotation><text:p>A comment</text:p></office:annotation></text:p>`,
      `<text:list><text:list-item><text:p>First</text:p></text:list-item><text:list-item><text:p>Second</text:p></text:list-item></text:list>`,
      `<table:table><table:table-header-rows><table:table-row><table:table-cell><text:p>K</text:p></table:table-cell><table:table-cell><text:p>V</text:p></table:table-cell></table:table-row></table:table-header-rows>`,
      `<table:table-row><table:table-cell><text:p>a</text:p><text:p>b</text:p></table:table-cell><table:table-cell/><table:table-cell><text:p>c</text:p></table:table-cell></table:table-row></table:table>`,
    ].join("\n");
    expect(extractOdt(odtOf(body)).text).toBe(
      ["## Intro", "One two   three\tfour\nfive", "Cited.", "- First", "- Second", "K | V\na b |  | c"].join("\n\n"),
    );
  });

  it("fails an encrypted or empty document", () => {
    const encrypted = `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data manifest:checksum-type="SHA1"/></manifest:file-entry></manifest:manifest>`;
    expect(() => extractOdt(odtOf("<text:p>x</text:p>", encrypted))).toThrow(new ExtractionError("encrypted document"));
    expect(() => extractOdt(odtOf("<text:p> </text:p>"))).toThrow(new ExtractionError("no extractable text"));
  });
});
