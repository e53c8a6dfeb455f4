/**
 * PDF text, one section per page, read with pdf.js (its legacy build runs in Node without a
 * DOM). Nothing here touches the network, a canvas or `eval`: fonts are only parsed for their
 * character maps, and the CJK character maps come from the installed package's files.
 *
 * pdf.js is tolerant: a damaged file it can repair is read; one it cannot ends as
 * "corrupt or truncated PDF: ...". Scanned pages have no text layer and there is no OCR here,
 * so a PDF whose pages hold no text at all is "no extractable text".
 */
import { createRequire } from "node:module";
import path from "node:path";
import { getDocument, VerbosityLevel, type PDFDocumentProxy } from "pdfjs-dist/legacy/build/pdf.mjs";
import { joinSections, type Extracted } from "./types.ts";
import { ExtractionError } from "../errors.ts";

const CLEANUP_EVERY = 25;
const CMAP_DIR = path.join(path.dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json")), "cmaps") + "/";

// What pdf.js throws (or passes on from its parser) for a file it cannot read. Older releases
// named a missing or unreadable source MissingPDFException / UnexpectedResponseException.
const CORRUPT = new Set([
  "InvalidPDFException",
  "MissingPDFException",
  "UnexpectedResponseException",
  "ResponseException",
  "FormatError",
  "UnknownErrorException",
]);

export interface PdfOptions {
  /** Checked between pages: an aborted extraction stops there and frees the document. */
  signal?: AbortSignal;
}

export async function extractPdf(bytes: Uint8Array, options: PdfOptions = {}): Promise<Extracted> {
  const loadingTask = getDocument({
    // pdf.js transfers the buffer it is given to its worker, detaching it: hand it a copy.
    data: bytes.slice(),
    // No `isEvalSupported`: pdf.js 6 dropped the option along with its last use of `new Function`.
    disableFontFace: true,
    useSystemFonts: false,
    useWorkerFetch: false,
    useWasm: false,
    enableXfa: false,
    isOffscreenCanvasSupported: false,
    isImageDecoderSupported: false,
    cMapUrl: CMAP_DIR,
    cMapPacked: true,
    verbosity: VerbosityLevel.ERRORS,
  });
  try {
    const doc = await loadingTask.promise;
    const pages = await readPages(doc, options.signal);
    const extracted = joinSections(pages);
    if (!extracted.text) throw new ExtractionError("no extractable text");
    return extracted;
  } catch (err) {
    throw asExtractionError(err);
  } finally {
    await loadingTask.destroy();
  }
}

async function readPages(doc: PDFDocumentProxy, signal: AbortSignal | undefined): Promise<{ text: string; at: { page: number } }[]> {
  const pages: { text: string; at: { page: number } }[] = [];
  for (let number = 1; number <= doc.numPages; number++) {
    signal?.throwIfAborted();
    const page = await doc.getPage(number);
    try {
      const content = await page.getTextContent();
      pages.push({ text: pageText(content.items), at: { page: number } });
    } finally {
      page.cleanup();
    }
    // The parser keeps every page's dictionary, fonts and images cached (~0.2 MB a page in
    // plain prose); emptying those caches now and then bounds a long document's memory at the
    // cost of parsing its fonts again.
    if (number % CLEANUP_EVERY === 0) await doc.cleanup();
  }
  return pages;
}

interface TextRun {
  str: string;
  transform: number[];
  height: number;
  hasEOL: boolean;
}

// A baseline move of more than this share of the font size starts a new line (a superscript
// moves less); more than PARAGRAPH_GAP line heights leaves a blank line, which the chunker
// takes as a paragraph break.
const NEW_LINE = 0.5;
const PARAGRAPH_GAP = 1.7;

/**
 * The page's text runs in content-stream order, which is reading order for what word
 * processors write (and keeps columns whole, where sorting by position would interleave them).
 */
export function pageText(items: readonly object[]): string {
  let text = "";
  let lastY: number | undefined;
  let lastSize = 0;
  let endOfLine = false;
  for (const item of items) {
    if (!("str" in item)) continue; // marked-content boundaries
    const run = item as TextRun;
    if (run.str) {
      const y = run.transform[5] ?? 0;
      const size = Math.max(run.height, lastSize, 1);
      if (lastY !== undefined) {
        const dy = Math.abs(y - lastY);
        if (dy > size * PARAGRAPH_GAP) text += "\n\n";
        else if (endOfLine || dy > size * NEW_LINE) text += "\n";
      }
      text += run.str;
      lastY = y;
      lastSize = run.height;
      endOfLine = false;
    }
    if (run.hasEOL) endOfLine = true;
  }
  return tidy(text);
}

/** Strips NULs (some encodings map unknown glyphs to them), trailing blanks and runs of blank lines. */
function tidy(text: string): string {
  return text
    .replaceAll("\u0000", "")
    .replace(/[ \t\u00a0]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n");
}

function asExtractionError(err: unknown): unknown {
  if (err instanceof ExtractionError) return err;
  const name = err instanceof Error ? err.name : undefined;
  if (name === "PasswordException") return new ExtractionError("encrypted PDF", { cause: err });
  if (name !== undefined && CORRUPT.has(name)) {
    const detail = (err as Error).message.replace(/\.$/, "");
    return new ExtractionError(`corrupt or truncated PDF: ${detail}`, { cause: err });
  }
  return err;
}
