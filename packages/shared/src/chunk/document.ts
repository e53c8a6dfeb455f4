/** A document's chunks as the worker indexes them: cut from its extracted text, each with its citation. */
import type { Section } from "../extract/types.ts";
import { chunkText, type ChunkOptions } from "./chunk.ts";
import type { Citation } from "../domain/citation.ts";
import { citeChunks } from "./citations.ts";

/** A chunk by its offsets into the extracted text (its text is `text.slice(start, end)`). */
export interface DocumentChunk {
  index: number;
  start: number;
  end: number;
  citation: Citation;
}

/** The chunks of an extracted text; none when it holds no text. A chunk never spans two sections (pages, sheets, slides), so each cites exactly one. */
export function chunkDocument(text: string, sections: readonly Section[], opts: ChunkOptions): DocumentChunk[] {
  const chunks =
    sections.length === 0
      ? chunkText(text, opts)
      : sections
          .flatMap((s) =>
            chunkText(text.slice(s.start, s.end), opts).map((c) => ({ ...c, start: c.start + s.start, end: c.end + s.start })),
          )
          .map((c, index) => ({ ...c, index }));
  const citations = citeChunks(text, sections, chunks);
  return chunks.map(({ index, start, end }, i) => ({ index, start, end, citation: citations[i]! }));
}
