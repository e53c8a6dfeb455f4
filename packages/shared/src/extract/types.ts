/**
 * What every document extractor returns: the text, and where in it each page, sheet or slide
 * lies, so chunks can carry citations. Headings are written as Markdown heading lines
 * (`# Title`, `## Part`) so the chunker can split at them and name the heading path.
 */
export interface Section {
  /** UTF-16 offsets into `Extracted.text`; sections are ordered and do not overlap. */
  start: number;
  end: number;
  page?: number;
  sheet?: string;
  slide?: number;
}

export interface Extracted {
  text: string;
  sections: Section[];
  /** Files attached to an e-mail, listed (not extracted). */
  attachments?: string[];
}

/** Limits on what one document may make the extractor do. */
export interface ExtractionLimits {
  /** Largest total uncompressed size of a ZIP-based file's entries. */
  maxUncompressedBytes: number;
  /** Most entries a ZIP-based file may have. */
  maxEntries: number;
}

export const DEFAULT_LIMITS: ExtractionLimits = { maxUncompressedBytes: 200 * 1024 * 1024, maxEntries: 10_000 };

/** Joins parts (pages, sheets, slides) into one text and records where each lies. */
export function joinSections<T extends Omit<Section, "start" | "end">>(parts: { text: string; at: T }[]): Extracted {
  let text = "";
  const sections: Section[] = [];
  for (const part of parts) {
    const body = part.text.trim();
    if (!body) continue;
    if (text) text += "\n\n";
    sections.push({ ...part.at, start: text.length, end: text.length + body.length });
    text += body;
  }
  return { text, sections };
}
