import { describe, expect, it } from "vitest";
import { attr, resolvePart, scanXml } from "./xml.ts";

function events(xml: string): string[] {
  const out: string[] = [];
  scanXml(xml, {
    open: (name, attrs, selfClosing) => out.push(`<${name}${selfClosing ? "/" : ""} ${attrs.trim()}`.trim()),
    close: (name) => out.push(`</${name}`),
    text: (text) => out.push(JSON.stringify(text)),
  });
  return out;
}

describe("scanXml", () => {
  it("reports local names, decoded text, CDATA, and skips comments and declarations", () => {
    const xml = `<?xml version="1.0"?><!-- <w:p> --><w:p a="x > y"><w:t>a &amp; b &#x263A;&#65;</w:t><![CDATA[<raw>]]><w:br/></w:p>`;
    expect(events(xml)).toEqual(['<p a="x > y"', "<t", '"a & b ☺A"', "</t", '"<raw>"', "<br/", "</br", "</p"]);
  });

  it("never expands entities declared in a DOCTYPE", () => {
    const xml = `<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;">]><d>&b;</d>`;
    expect(events(xml)).toEqual(["<d", '"&b;"', "</d"]);
  });

  it("fails malformed markup as a corrupt file", () => {
    expect(() => events("<a><b")).toThrow(/^corrupt or truncated file: /);
    expect(() => events("<a><!-- never closed")).toThrow(/^corrupt or truncated file: /);
  });
});

describe("attr and resolvePart", () => {
  it("matches attributes with any prefix unless one is given", () => {
    expect(attr(' id="256" r:id="rId2"', "r:id")).toBe("rId2");
    expect(attr(' w:val="Heading1"', "val")).toBe("Heading1");
    expect(attr(" name='A &amp; B'", "name")).toBe("A & B");
    expect(attr(' sheetId="1"', "id")).toBeUndefined();
  });

  it("resolves relationship targets against the source part's folder", () => {
    expect(resolvePart("ppt/slides/", "../notesSlides/notesSlide1.xml")).toBe("ppt/notesSlides/notesSlide1.xml");
    expect(resolvePart("xl/", "/xl/sharedStrings.xml")).toBe("xl/sharedStrings.xml");
    expect(resolvePart("", "word/document.xml")).toBe("word/document.xml");
  });
});
