/**
 * Text of an Excel workbook (XLSX): one section per worksheet, in workbook order, named by the
 * sheet. The first non-empty row is the header: it is written as it is, and every later row
 * becomes one line of `header: value` pairs (`Name: Ada | Age: 36`), so a row read alone still
 * says what its values mean. Cells hold shared or inline strings, numbers (dates as ISO
 * dates), booleans, errors or formula results; formulas themselves are left out.
 */
import { type ExtractionLimits, DEFAULT_LIMITS, type Extracted, joinSections } from "../types.ts";
import { ExtractionError } from "../../errors.ts";
import { type Relationship, attr, decodeXml, readMainPart, scanXml, targetOfType } from "./xml.ts";
import { type DateKind, dateStyles, formatNumber } from "./xlsx-values.ts";
import { readZip } from "./zip.ts";

interface Sheet {
  name: string;
  part: string;
}

export function extractXlsx(bytes: Uint8Array, limits: ExtractionLimits = DEFAULT_LIMITS): Extracted {
  const { xml, rels } = readMainPart(bytes, limits, "xl/workbook.xml", "XLSX");
  const { sheets, date1904 } = readWorkbook(xml, rels);
  const sharedPart = targetOfType(rels, "sharedStrings");
  const stylesPart = targetOfType(rels, "styles");
  const wanted = new Set([...sheets.map((sheet) => sheet.part), sharedPart, stylesPart]);
  const files = readZip(bytes, limits, (name) => wanted.has(name));
  const read = (part: string | undefined) => {
    const file = part === undefined ? undefined : files.get(part);
    return file && decodeXml(file);
  };
  const shared = readSharedStrings(read(sharedPart) ?? "");
  const dates = dateStyles(read(stylesPart) ?? "");
  const parts = sheets.map((sheet) => ({
    text: sheetText(read(sheet.part) ?? "", (cell) => cellValue(cell, shared, dates, date1904)),
    at: { sheet: sheet.name },
  }));
  const extracted = joinSections(parts);
  if (!extracted.text) throw new ExtractionError("no extractable text");
  return extracted;
}

function readWorkbook(xml: string, rels: Map<string, Relationship>): { sheets: Sheet[]; date1904: boolean } {
  const sheets: Sheet[] = [];
  let date1904 = false;
  scanXml(xml, {
    open(name, attrs) {
      if (name === "workbookPr") date1904 = /^(1|true)$/.test(attr(attrs, "date1904") ?? "");
      if (name !== "sheet") return;
      const rel = rels.get(attr(attrs, "r:id") ?? "");
      // Chart sheets and dialog sheets hold no cells.
      if (rel && !rel.external && rel.type.endsWith("/worksheet")) sheets.push({ name: attr(attrs, "name") ?? "", part: rel.target });
    },
  });
  return { sheets, date1904 };
}

/** Shared strings in order; phonetic readings (r:rPh) are not part of the text. */
function readSharedStrings(xml: string): string[] {
  const strings: string[] = [];
  let current: string | undefined;
  let phonetic = 0;
  let inText = false;
  scanXml(xml, {
    open(name) {
      if (name === "si") current = "";
      else if (name === "rPh") phonetic++;
      else if (name === "t") inText = true;
    },
    close(name) {
      if (name === "si") strings.push(current ?? "");
      else if (name === "rPh") phonetic--;
      else if (name === "t") inText = false;
    },
    wantText: () => inText && phonetic === 0 && current !== undefined,
    text: (text) => (current += text),
  });
  return strings;
}

interface Cell {
  type: string;
  style: number;
  value: string;
  inline: string;
}

function cellValue(cell: Cell, shared: string[], dates: Map<number, DateKind>, date1904: boolean): string {
  switch (cell.type) {
    case "s":
      return shared[Number(cell.value)] ?? "";
    case "inlineStr":
      return cell.inline;
    case "b":
      return cell.value === "1" ? "TRUE" : cell.value === "0" ? "FALSE" : cell.value;
    case "n":
      return formatNumber(cell.value, dates.get(cell.style), date1904);
    default: // "str" (formula result), "e" (error such as #DIV/0!), "d" (ISO 8601 date)
      return cell.value;
  }
}

/** One line per non-empty row; see the module comment for the header and the labels. */
function sheetText(xml: string, valueOf: (cell: Cell) => string): string {
  const lines: string[] = [];
  let header: Map<number, string> | undefined;
  let row = new Map<number, string>();
  let cell: Cell | undefined;
  let column = 0;
  let into: "value" | "inline" | undefined;
  let phonetic = 0;
  scanXml(xml, {
    open(name, attrs) {
      if (name === "row") [row, column] = [new Map(), -1];
      else if (name === "c") {
        const ref = attr(attrs, "r");
        column = ref ? columnIndex(ref) : column + 1;
        cell = { type: attr(attrs, "t") ?? "n", style: Number(attr(attrs, "s") ?? 0), value: "", inline: "" };
      } else if (name === "v") into = "value";
      else if (name === "t" && cell?.type === "inlineStr") into = "inline";
      else if (name === "rPh") phonetic++;
    },
    close(name) {
      if (name === "v" || name === "t") into = undefined;
      else if (name === "rPh") phonetic--;
      else if (name === "c" && cell) {
        const value = valueOf(cell).replace(/\s+/g, " ").trim();
        if (value) row.set(column, value);
        cell = undefined;
      } else if (name === "row" && row.size > 0) {
        const cells = [...row].sort(([a], [b]) => a - b);
        if (!header) {
          header = row;
          lines.push(cells.map(([, value]) => value).join(" | "));
        } else {
          lines.push(cells.map(([at, value]) => (header!.has(at) ? `${header!.get(at)}: ${value}` : value)).join(" | "));
        }
      }
    },
    wantText: () => into !== undefined && cell !== undefined && phonetic === 0,
    text: (text) => {
      if (into === "value") cell!.value += text;
      else if (into === "inline") cell!.inline += text;
    },
  });
  return lines.join("\n");
}

/** "AB12" → 27 (0-based column of the reference). */
function columnIndex(ref: string): number {
  let n = 0;
  for (const c of ref) {
    const code = c.charCodeAt(0) & ~0x20;
    if (code < 65 || code > 90) break;
    n = n * 26 + (code - 64);
  }
  return n - 1;
}
