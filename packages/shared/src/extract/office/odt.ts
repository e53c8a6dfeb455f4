/**
 * Text of an OpenDocument text file (ODT): content.xml's paragraphs, headings (text:h, at
 * their outline level) as Markdown heading lines, list items starting with "- ", and tables
 * one row per line. Footnotes, comments, tracked deletions and tables of contents are left out.
 */
import { Blocks, ODF_TABLE } from "./blocks.ts";
import { type ExtractionLimits, DEFAULT_LIMITS, type Extracted, joinSections } from "../types.ts";
import { ExtractionError } from "../../errors.ts";
import { attr, decodeXml, scanXml } from "./xml.ts";
import { readZip } from "./zip.ts";

const CONTENT = "content.xml";
const MANIFEST = "META-INF/manifest.xml";

export function extractOdt(bytes: Uint8Array, limits: ExtractionLimits = DEFAULT_LIMITS): Extracted {
  const files = readZip(bytes, limits, (name) => name === CONTENT || name === MANIFEST);
  const manifest = files.get(MANIFEST);
  // An encrypted package keeps its layout, but content.xml is ciphertext.
  if (manifest && decodeXml(manifest).includes("encryption-data")) throw new ExtractionError("encrypted document");
  const content = files.get(CONTENT);
  if (!content) throw new ExtractionError(`corrupt or truncated file: no ${CONTENT} in the ODT`);
  const text = contentText(decodeXml(content));
  if (!text) throw new ExtractionError("no extractable text");
  return joinSections([{ text, at: {} }]);
}

const SKIPPED = new Set(["note", "annotation", "tracked-changes", "table-of-content", "illustration-index", "table-index"]);

function contentText(xml: string): string {
  const blocks = new Blocks();
  let skip = 0;
  let inBody = false;
  let list = 0;
  let heading: number | undefined;
  scanXml(xml, {
    // close() follows open() for self-closing elements too, so counters balance.
    open(name, attrs) {
      if (SKIPPED.has(name)) skip++;
      if (name === "body") inBody = true;
      if (skip > 0 || !inBody) return;
      switch (name) {
        case "h":
        case "p":
          if (blocks.paragraphDepth === 0) heading = name === "h" ? Number(attr(attrs, "outline-level")) || 1 : undefined;
          blocks.startParagraph();
          break;
        case "s": // n spaces; whitespace in text nodes collapses, as in HTML
          blocks.add(" ".repeat(Math.min(Math.max(Number(attr(attrs, "c") ?? 1) || 1, 1), 100)));
          break;
        case "tab":
          blocks.add("\t");
          break;
        case "line-break":
          blocks.add("\n");
          break;
        case "list-item":
          list++;
          break;
        default:
          blocks.openTablePart(name, ODF_TABLE);
      }
    },
    close(name) {
      if (SKIPPED.has(name)) skip--;
      if (name === "body") inBody = false;
      if (skip > 0 || !inBody) return;
      switch (name) {
        case "h":
        case "p":
          blocks.endParagraph({ heading, list: list > 0 });
          break;
        case "list-item":
          list--;
          break;
        default:
          blocks.closeTablePart(name, ODF_TABLE);
      }
    },
    wantText: () => skip === 0 && blocks.paragraphDepth > 0,
    text: (text) => blocks.add(text.replace(/[ \t\r\n]+/g, " ")),
  });
  return blocks.result();
}
