/**
 * Text of a Word document (DOCX): the body's paragraphs and tables, in order. Headings (the
 * built-in Title and Heading 1-6 styles, styles based on them, and outline levels) become
 * Markdown heading lines; list paragraphs start with "- "; table rows are single lines.
 * Headers, footers, footnotes, comments, deleted revisions and tables of contents are left out.
 */
import { Blocks, OOXML_TABLE } from "./blocks.ts";
import { type ExtractionLimits, DEFAULT_LIMITS, type Extracted, joinSections } from "../types.ts";
import { ExtractionError } from "../../errors.ts";
import { attr, decodeXml, readMainPart, scanXml, targetOfType } from "./xml.ts";
import { readZip } from "./zip.ts";

interface Style {
  name: string;
  basedOn?: string | undefined;
  outline?: number | undefined;
}

export function extractDocx(bytes: Uint8Array, limits: ExtractionLimits = DEFAULT_LIMITS): Extracted {
  const document = readMainPart(bytes, limits, "word/document.xml", "DOCX");
  const stylesPart = targetOfType(document.rels, "styles");
  const stylesXml = stylesPart ? readZip(bytes, limits, (name) => name === stylesPart).get(stylesPart) : undefined;
  const styles = stylesXml ? readStyles(decodeXml(stylesXml)) : new Map<string, Style>();
  const text = bodyText(document.xml, styles);
  if (!text) throw new ExtractionError("no extractable text");
  return joinSections([{ text, at: {} }]);
}

// Content left out: alternate renderings for old readers (VML text boxes repeat the DrawingML
// ones) and revisions that moved or deleted text.
const SKIPPED = new Set(["Fallback", "moveFrom", "del"]);

function bodyText(xml: string, styles: Map<string, Style>): string {
  const blocks = new Blocks();
  let skip = 0;
  let inText = false;
  let inRun = 0;
  let paragraph: { style?: string | undefined; outline?: number | undefined; list: boolean } = { list: false };
  scanXml(xml, {
    // close() follows open() for self-closing elements too, so counters balance.
    open(name, attrs) {
      if (SKIPPED.has(name)) skip++;
      if (skip > 0) return;
      const outer = blocks.paragraphDepth === 1;
      switch (name) {
        case "p":
          if (blocks.paragraphDepth === 0) paragraph = { list: false };
          blocks.startParagraph();
          break;
        case "pStyle":
          if (outer) paragraph.style = attr(attrs, "val");
          break;
        case "outlineLvl":
          if (outer) paragraph.outline = Number(attr(attrs, "val"));
          break;
        case "numPr":
          if (outer) paragraph.list = true;
          break;
        case "r":
          inRun++;
          break;
        case "t":
          inText = true;
          break;
        case "tab": // also a tab stop definition in w:tabs, outside runs
          if (inRun) blocks.add("\t");
          break;
        case "br":
        case "cr":
          if (inRun) blocks.add("\n");
          break;
        case "noBreakHyphen":
          blocks.add("-");
          break;
        default:
          blocks.openTablePart(name, OOXML_TABLE);
      }
    },
    close(name) {
      if (SKIPPED.has(name)) skip--;
      if (skip > 0) return;
      switch (name) {
        case "t":
          inText = false;
          break;
        case "r":
          inRun--;
          break;
        case "p": {
          const { style, outline, list } = paragraph;
          const toc = style !== undefined && /^toc ?(\d|heading)$/i.test(styles.get(style)?.name ?? style);
          blocks.endParagraph({ heading: headingLevel(style, outline, styles), list, drop: toc });
          break;
        }
        default:
          blocks.closeTablePart(name, OOXML_TABLE);
      }
    },
    wantText: () => inText && skip === 0,
    text: (text) => blocks.add(text),
  });
  return blocks.result();
}

/** Heading level of a paragraph: its own outline level, else its style's, else none. */
function headingLevel(style: string | undefined, outline: number | undefined, styles: Map<string, Style>): number | undefined {
  if (outline !== undefined) return levelOf(outline);
  for (let id = style, hops = 0; id !== undefined && hops < 10; hops++) {
    const found = styles.get(id);
    // Built-in styles keep English names ("heading 1") whatever the UI language; ids do not.
    const name = found?.name ?? id;
    const heading = /^heading ?([1-6])$/i.exec(name);
    if (heading) return Number(heading[1]);
    if (/^title$/i.test(name)) return 1;
    if (found?.outline !== undefined) return levelOf(found.outline);
    id = found?.basedOn;
  }
  return undefined;
}

// Outline levels 0-8 are heading levels 1-9 (Markdown stops at 6); 9 means body text.
const levelOf = (outline: number) => (outline >= 0 && outline < 9 ? Math.min(outline + 1, 6) : undefined);

function readStyles(xml: string): Map<string, Style> {
  const styles = new Map<string, Style>();
  let current: Style | undefined;
  scanXml(xml, {
    open(name, attrs) {
      if (name === "style") {
        const id = attr(attrs, "styleId");
        current = attr(attrs, "type") === "paragraph" && id ? { name: id } : undefined;
        if (current) styles.set(id!, current);
      } else if (!current) return;
      else if (name === "name") current.name = attr(attrs, "val") ?? current.name;
      else if (name === "basedOn") current.basedOn = attr(attrs, "val");
      else if (name === "outlineLvl") current.outline = Number(attr(attrs, "val"));
    },
    close(name) {
      if (name === "style") current = undefined;
    },
  });
  return styles;
}
