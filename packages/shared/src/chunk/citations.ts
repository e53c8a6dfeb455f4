import type { Section } from "../extract/types.ts";
import type { Citation } from "../domain/citation.ts";
import { headings, type Heading } from "./markdown.ts";

/** The citation of each chunk, by the offset where it starts. */
export function citeChunks(text: string, sections: readonly Section[], chunks: readonly { start: number }[]): Citation[] {
  const marks = headings(text);
  const path: Heading[] = [];
  let next = 0;
  let section = 0;
  // Chunks come in offset order, so one pass over headings and sections serves them all.
  return chunks.map(({ start }) => {
    // A heading that starts the chunk belongs to its path, hence <=.
    while (next < marks.length && marks[next]!.at <= start) {
      const h = marks[next++]!;
      while (path.length > 0 && path[path.length - 1]!.level >= h.level) path.pop();
      path.push(h);
    }
    while (section < sections.length - 1 && sections[section]!.end < start) section++;
    const s = sections[section];
    const cite: Citation = {};
    if (s && s.start <= start + 1) {
      if (s.page !== undefined) cite.page = s.page;
      if (s.sheet !== undefined) cite.sheet = s.sheet;
      if (s.slide !== undefined) cite.slide = s.slide;
    }
    if (path.length > 0) cite.headingPath = path.map((h) => h.title);
    return cite;
  });
}
