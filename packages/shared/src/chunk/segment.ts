/**
 * Where a text may be split, and how good each place is. Spans never start or end with
 * whitespace; each carries the strength of the break before it. Lines are read as Markdown
 * by markdown.ts.
 */
import { readLine, type MarkdownLine } from "./markdown.ts";

export const BREAK = {
  /** Inside a word: the last resort, for runs with no whitespace at all. */
  token: 0,
  /** Whitespace between words. */
  word: 1,
  /** A sentence end, or a line break (list items, table rows, code lines). */
  sentence: 2,
  /** A blank line. */
  paragraph: 3,
  /** A line break before a Markdown heading: the best place for a chunk to start. */
  heading: 4,
} as const;

export type BreakLevel = (typeof BREAK)[keyof typeof BREAK];

export interface Span {
  start: number;
  end: number;
  /** The break before `start`; for the first span of a text it is meaningless. */
  level: BreakLevel;
  /**
   * Set on a table row and on each line of a fenced code block (the offset where the row or
   * block starts): spans sharing a group are kept in one piece when together they fit.
   */
  group?: number;
}

const CLOSERS = new Set([")", "]", '"', "'", "»", "”", "’", "」", "』", "）", "*", "_"]);
const TERMINATORS = new Set([".", "!", "?", "…", "。", "！", "？"]);
// CJK sentences end without a following space.
const CJK_STOP = /[。！？]+[」』）”’]*(?=\S)/gu;
const HAS_CJK_STOP = /[。！？]/;

/**
 * The sentences and lines of text[start, end), which must not start or end with whitespace.
 * Table rows (lines starting with "|" or holding " | " cells) and fenced code lines are never
 * split at sentence ends: a row is one span, a code block one group of line spans.
 */
export function splitSentences(text: string, start: number, end: number): Span[] {
  const spans: Span[] = [];
  let spanStart = start;
  let level: BreakLevel = BREAK.heading;
  let line = readLine(text, start, end, undefined);
  const gaps = /\s+/g;
  gaps.lastIndex = start;
  for (let m = gaps.exec(text); m !== null && m.index < end; m = gaps.exec(text)) {
    const gapStart = m.index;
    const gapEnd = gapStart + m[0].length;
    let gapLevel: BreakLevel;
    const newlines = countNewlines(m[0]);
    if (newlines > 0) {
      const next = readLine(text, gapEnd, end, line.fence);
      gapLevel = next.heading !== null ? BREAK.heading : newlines > 1 ? BREAK.paragraph : BREAK.sentence;
      pushSpan(spans, text, spanStart, gapStart, level, line);
      line = next;
    } else {
      if (line.kind !== "prose" || !endsSentence(text, gapStart, gapEnd)) continue;
      gapLevel = BREAK.sentence;
      pushSpan(spans, text, spanStart, gapStart, level, line);
    }
    spanStart = gapEnd;
    level = gapLevel;
  }
  pushSpan(spans, text, spanStart, end, level, line);
  return spans;
}

function pushSpan(spans: Span[], text: string, start: number, end: number, level: BreakLevel, line: MarkdownLine): void {
  if (line.kind === "prose") pushSplitAtCjkStops(spans, text, start, end, level);
  else spans.push({ start, end, level, group: line.group });
}

/** The whitespace-separated words of a span; the first keeps the span's break level. */
export function splitWords(text: string, span: Span): Span[] {
  const words: Span[] = [];
  const runs = /\S+/g;
  runs.lastIndex = span.start;
  for (let m = runs.exec(text); m !== null && m.index < span.end; m = runs.exec(text)) {
    const wordEnd = Math.min(m.index + m[0].length, span.end);
    words.push({ start: m.index, end: wordEnd, level: words.length === 0 ? span.level : BREAK.word });
  }
  return words;
}

function pushSplitAtCjkStops(spans: Span[], text: string, start: number, end: number, level: BreakLevel): void {
  const sentence = text.slice(start, end);
  let from = 0;
  // Searching the slice, not `text` from `start`: a failed search must not scan to the end of the document.
  if (HAS_CJK_STOP.test(sentence)) {
    for (const m of sentence.matchAll(CJK_STOP)) {
      const stopEnd = m.index + m[0].length;
      spans.push({ start: start + from, end: start + stopEnd, level: from === 0 ? level : BREAK.sentence });
      from = stopEnd;
    }
  }
  spans.push({ start: start + from, end, level: from === 0 ? level : BREAK.sentence });
}

function countNewlines(gap: string): number {
  let count = 0;
  for (let i = gap.indexOf("\n"); i >= 0; i = gap.indexOf("\n", i + 1)) count++;
  return count;
}

/**
 * "end. Next" is a sentence break, "e.g. this" is not: the punctuation (possibly inside quotes
 * or brackets) must be followed by something other than a lower-case letter.
 */
function endsSentence(text: string, gapStart: number, gapEnd: number): boolean {
  let i = gapStart - 1;
  while (i > 0 && CLOSERS.has(text[i]!)) i--;
  if (!TERMINATORS.has(text[i] ?? "")) return false;
  const next = text.codePointAt(gapEnd);
  if (next === undefined) return true;
  if (next >= 97 && next <= 122) return false;
  return next < 0x80 || !/\p{Ll}/u.test(String.fromCodePoint(next));
}
