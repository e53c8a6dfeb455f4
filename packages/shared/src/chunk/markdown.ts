/**
 * The one Markdown reader: what kind of line starts at an offset, given the fenced block still
 * open before it. The chunker's break levels (segment.ts) and the citations' heading paths
 * (citations.ts) both read lines through it, so a chunk starts at a heading exactly when that
 * heading is in the path, and a "#" line inside a fenced block is code for both.
 */

export interface Fence {
  /** The opening run (e.g. "```" or "~~~~"). */
  marker: string;
  /** Offset where the block starts. */
  start: number;
}

export interface Heading {
  /** Offset of the heading's first "#". */
  at: number;
  level: number;
  title: string;
}

/** One line of text, seen from its first non-whitespace character. */
export interface MarkdownLine {
  /** Prose splits at sentence ends; a table row or a code line only at line breaks, then words. */
  kind: "prose" | "row" | "code";
  heading: Heading | null;
  /** Where the line's group starts: the line itself, or its fenced block. */
  group: number;
  /** The fenced block still open after this line. */
  fence: Fence | undefined;
}

// ATX headings: 1 to 6 "#", then a space, a tab or the end of the line; a closing run of "#" is dropped.
const ATX_HEADING = /^(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^(?:`{3,}|~{3,})/;

/** The line starting at `at` (its first non-whitespace character), read up to the line end or `end`. */
export function readLine(text: string, at: number, end: number, fence: Fence | undefined): MarkdownLine {
  let lineEnd = text.indexOf("\n", at);
  if (lineEnd < 0 || lineEnd > end) lineEnd = end;
  const content = text.slice(at, lineEnd).trimEnd();
  if (fence !== undefined) {
    // CommonMark: the closing fence uses the same character, at least as many, and nothing after it.
    const closes = /^(?:`+|~+)$/.test(content) && content.startsWith(fence.marker);
    return { kind: "code", heading: null, group: fence.start, fence: closes ? undefined : fence };
  }
  const marker = FENCE.exec(content)?.[0];
  if (marker !== undefined) return { kind: "code", heading: null, group: at, fence: { marker, start: at } };
  const m = ATX_HEADING.exec(content);
  const heading = m ? { at, level: m[1]!.length, title: (m[2] ?? "").trim() } : null;
  const row = content.startsWith("|") || content.includes(" | ");
  return { kind: row ? "row" : "prose", heading, group: at, fence: undefined };
}

/** The heading lines of a text, outside fenced code blocks, in order. */
export function headings(text: string): Heading[] {
  const found: Heading[] = [];
  let fence: Fence | undefined;
  for (let lineStart = 0; lineStart <= text.length; ) {
    let next = text.indexOf("\n", lineStart);
    if (next < 0) next = text.length;
    const at = lineStart + (text.slice(lineStart, next).length - text.slice(lineStart, next).trimStart().length);
    if (at < next) {
      const line = readLine(text, at, next, fence);
      fence = line.fence;
      if (line.heading) found.push(line.heading);
    }
    lineStart = next + 1;
  }
  return found;
}
