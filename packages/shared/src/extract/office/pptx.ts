/**
 * Text of a PowerPoint presentation (PPTX): one section per slide, numbered in presentation
 * order, holding the slide's shapes and tables and then its speaker notes. A slide's title
 * placeholder becomes a `#` heading line; each text paragraph is a paragraph, each table row a
 * line. Slide numbers, dates and footers repeated by the layout are left out.
 */
import { Blocks, OOXML_TABLE } from "./blocks.ts";
import { type ExtractionLimits, DEFAULT_LIMITS, type Extracted, joinSections } from "../types.ts";
import { ExtractionError } from "../../errors.ts";
import { type Relationship, attr, decodeXml, readMainPart, relationships, relsPartOf, scanXml, targetOfType } from "./xml.ts";
import { readZip } from "./zip.ts";

export function extractPptx(bytes: Uint8Array, limits: ExtractionLimits = DEFAULT_LIMITS): Extracted {
  const presentation = readMainPart(bytes, limits, "ppt/presentation.xml", "PPTX");
  let slides = slideOrder(presentation.xml, presentation.rels);
  if (slides.length === 0) slides = slidesByNumber(bytes, limits);
  const slideSet = new Set(slides.flatMap((slide) => [slide, relsPartOf(slide)]));
  const files = readZip(bytes, limits, (name) => slideSet.has(name));
  const notesParts = new Map<string, string>();
  for (const slide of slides) {
    const notes = targetOfType(relationships(files, slide), "notesSlide");
    if (notes) notesParts.set(slide, notes);
  }
  const wantedNotes = new Set(notesParts.values());
  const notes = readZip(bytes, limits, (name) => wantedNotes.has(name));
  const parts = slides.map((slide, i) => {
    const xml = files.get(slide);
    const notesXml = notes.get(notesParts.get(slide) ?? "");
    const text = [xml && shapesText(decodeXml(xml), false), notesXml && shapesText(decodeXml(notesXml), true)];
    return { text: text.filter(Boolean).join("\n\n"), at: { slide: i + 1 } };
  });
  const extracted = joinSections(parts);
  if (!extracted.text) throw new ExtractionError("no extractable text");
  return extracted;
}

/** Slide parts in the order of p:sldIdLst, which is the order of the slide show. */
function slideOrder(xml: string, rels: Map<string, Relationship>): string[] {
  const slides: string[] = [];
  scanXml(xml, {
    open(name, attrs) {
      if (name !== "sldId") return;
      const rel = rels.get(attr(attrs, "r:id") ?? "");
      if (rel && !rel.external) slides.push(rel.target);
    },
  });
  return slides;
}

/** Without a usable slide list, slides are taken in the order of their part names' numbers. */
function slidesByNumber(bytes: Uint8Array, limits: ExtractionLimits): string[] {
  const found: { name: string; n: number }[] = [];
  readZip(bytes, limits, (name) => {
    const m = /^ppt\/slides\/slide(\d+)\.xml$/.exec(name);
    if (m) found.push({ name, n: Number(m[1]) });
    return false;
  });
  return found.sort((a, b) => a.n - b.n).map((slide) => slide.name);
}

// Placeholders whose text the layout repeats on every slide, or that only picture the slide.
const NOISE = new Set(["sldNum", "dt", "ftr", "hdr", "sldImg"]);

/**
 * The text of a slide's shapes, or of a notes page's body placeholders only (the rest of a
 * notes page repeats the slide image and number).
 */
function shapesText(xml: string, notesPage: boolean): string {
  const blocks = new Blocks();
  let skip = 0; // inside mc:Fallback, which repeats mc:Choice
  let shape: "title" | "body" | "ignored" = "body";
  let inText = false;
  let tableDepth = 0;
  // Asked on open and on close alike, so every paragraph started is ended. A title's paragraphs
  // make one heading line: its txBody is an outer paragraph holding them.
  const isParagraph = (name: string) => (name === "p" ? shape !== "ignored" : shape === "title" && tableDepth === 0);
  scanXml(xml, {
    open(name, attrs) {
      if (name === "Fallback") skip++;
      if (skip > 0) return;
      switch (name) {
        case "sp":
        case "graphicFrame":
          shape = notesPage ? "ignored" : "body";
          break;
        case "ph": {
          const type = attr(attrs, "type") ?? "body";
          if (notesPage) shape = type === "body" ? "body" : "ignored";
          else if (type === "title" || type === "ctrTitle") shape = "title";
          else if (NOISE.has(type)) shape = "ignored";
          break;
        }
        case "txBody":
        case "p":
          if (isParagraph(name)) blocks.startParagraph();
          break;
        case "t":
          inText = true;
          break;
        case "br":
          blocks.add("\n");
          break;
        default:
          if (blocks.openTablePart(name, OOXML_TABLE) && name === OOXML_TABLE.table) tableDepth++;
      }
    },
    close(name) {
      if (name === "Fallback") skip--;
      if (skip > 0) return;
      switch (name) {
        case "txBody":
        case "p":
          if (isParagraph(name)) blocks.endParagraph(name === "txBody" ? { heading: 1 } : {});
          break;
        case "t":
          inText = false;
          break;
        default:
          if (blocks.closeTablePart(name, OOXML_TABLE) && name === OOXML_TABLE.table) tableDepth--;
      }
    },
    wantText: () => inText && skip === 0 && shape !== "ignored",
    text: (text) => blocks.add(text),
  });
  return blocks.result();
}
