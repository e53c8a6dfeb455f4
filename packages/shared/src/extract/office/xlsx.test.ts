import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { makeXlsx, SAMPLE_SHEETS, SAMPLE_SHEET_TEXTS } from "../../../test-support/office-fixtures.ts";
import { ExtractionError } from "../../errors.ts";
import { formatKind } from "./xlsx-values.ts";
import { extractXlsx } from "./xlsx.ts";

const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/** A hand-made workbook: sheet "Data" (sheet1.xml), a chart sheet, shared strings and styles. */
function xlsxOf(sheetData: string, { shared = [] as string[], date1904 = false } = {}): Uint8Array {
  const rel = (id: string, type: string, target: string) => `<Relationship Id="${id}" Type="${REL}/${type}" Target="${target}"/>`;
  const workbook = `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${REL}"><workbookPr date1904="${date1904 ? 1 : 0}"/><sheets><sheet name="Chart" sheetId="2" r:id="rId2"/><sheet name="Data &amp; more" sheetId="1" r:id="rId1"/></sheets></workbook>`;
  const rels = `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rel("rId1", "worksheet", "worksheets/sheet1.xml")}${rel("rId2", "chartsheet", "chartsheets/sheet1.xml")}${rel("rId3", "sharedStrings", "/xl/sharedStrings.xml")}${rel("rId4", "styles", "styles.xml")}</Relationships>`;
  const styles = `<styleSheet><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd\\ hh:mm"/></numFmts><cellStyleXfs count="1"><xf numFmtId="14"/></cellStyleXfs><cellXfs count="3"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/><xf numFmtId="164"/></cellXfs></styleSheet>`;
  return zipSync({
    "xl/workbook.xml": strToU8(workbook),
    "xl/_rels/workbook.xml.rels": strToU8(rels),
    "xl/sharedStrings.xml": strToU8(`<sst>${shared.map((s) => `<si>${s}</si>`).join("")}</sst>`),
    "xl/styles.xml": strToU8(styles),
    "xl/worksheets/sheet1.xml": strToU8(`<worksheet><sheetData>${sheetData}</sheetData></worksheet>`),
    "xl/chartsheets/sheet1.xml": strToU8("<chartsheet/>"),
  });
}

describe("extractXlsx", () => {
  it("gives one section per sheet, rows labelled by the header row", async () => {
    const extracted = extractXlsx(await makeXlsx());
    expect(extracted.text).toBe(SAMPLE_SHEET_TEXTS.join("\n\n"));
    expect(extracted.sections.map((s) => s.sheet)).toEqual(SAMPLE_SHEETS.map((s) => s.name));
    for (const [i, section] of extracted.sections.entries()) {
      expect(extracted.text.slice(section.start, section.end)).toBe(SAMPLE_SHEET_TEXTS[i]);
    }
  });

  it("reads shared, rich, inline and formula strings, booleans, errors, dates and sparse cells", () => {
    const shared = ["<t>City</t>", "<r><t>Ber</t></r><r><t>lin</t></r>", "<t>東京</t><rPh><t>トウキョウ</t></rPh>", "<t>When</t>"];
    const rows = [
      `<row r="2"><c r="B2" t="s"><v>0</v></c><c r="C2" t="s"><v>3</v></c><c r="E2" t="inlineStr"><is><t>Open</t></is></c></row>`,
      `<row r="3"><c r="B3" t="s"><v>1</v></c><c r="C3" s="1"><v>45292</v></c><c r="D3"><v>7</v></c><c r="E3" t="b"><v>1</v></c></row>`,
      `<row r="4"><c r="B4" t="s"><v>2</v></c><c r="C4" s="2"><v>45292.5</v></c><c r="E4" t="e"><v>#DIV/0!</v></c></row>`,
      `<row r="5"><c r="B5" t="str"><f>A1&amp;"x"</f><v>Rome &amp; co</v></c><c><v>1.5</v></c></row>`,
    ].join("");
    const extracted = extractXlsx(xlsxOf(rows, { shared }));
    expect(extracted.sections).toEqual([{ sheet: "Data & more", start: 0, end: extracted.text.length }]);
    expect(extracted.text).toBe(
      [
        "City | When | Open",
        "City: Berlin | When: 2024-01-01 | 7 | Open: TRUE",
        "City: 東京 | When: 2024-01-01 12:00:00 | Open: #DIV/0!",
        "City: Rome & co | When: 1.5",
      ].join("\n"),
    );
  });

  it("honours the 1904 date system", () => {
    const rows = `<row><c r="A1" t="inlineStr"><is><t>Day</t></is></c></row><row><c r="A2" s="1"><v>43830</v></c></row>`;
    expect(extractXlsx(xlsxOf(rows, { date1904: true })).text).toBe("Day\nDay: 2024-01-01");
  });

  it("tells date formats from other number formats", () => {
    expect(formatKind("dd/mm/yyyy")).toBe("date");
    expect(formatKind("h:mm AM/PM")).toBe("time");
    expect(formatKind("[h]:mm")).toBeUndefined(); // elapsed time: a duration
    expect(formatKind("mmm")).toBe("date");
    expect(formatKind('#,##0.00 "days"')).toBeUndefined();
    expect(formatKind("[$-409]mmmm d, yyyy;@")).toBe("date");
  });

  it("fails a workbook without text", () => {
    expect(() => extractXlsx(xlsxOf(`<row r="1"><c r="A1"/></row>`))).toThrow(new ExtractionError("no extractable text"));
  });
});
