/**
 * The pieces chunks are built from: sentences and lines with their token counts, split
 * further (into words, then token runs) only when one is too big to fit.
 */
import { BREAK, splitSentences, splitWords, type Span } from "./segment.ts";
import { countTokens, countTokensWithin, tokenBoundaries } from "./tokenizer.ts";

export interface Unit extends Span {
  tokens: number;
  /** A table row or fenced code block (or a line of one too big for a chunk): never split, not even for an overlap. */
  whole?: boolean;
}

/**
 * Units covering text[start, end) (trimmed), none over `maxTokens` unless a single character
 * is, or unless it is a table row or fenced code block of at most `wholeTokens`, kept whole.
 * A bigger row is split into words, a bigger code block into lines (whole when they fit), then words.
 */
export function buildUnits(text: string, start: number, end: number, maxTokens: number, wholeTokens = maxTokens): Unit[] {
  const units: Unit[] = [];
  const spans = splitSentences(text, start, end);
  for (let i = 0; i < spans.length; ) {
    const first = spans[i]!;
    let next = i + 1;
    if (first.group !== undefined) {
      while (next < spans.length && spans[next]!.group === first.group) next++;
      const last = spans[next - 1]!;
      // Counting stops at the limit, so a block too big to keep costs at most one chunk's worth more.
      const tokens = countTokensWithin(text.slice(first.start, last.end), wholeTokens);
      if (tokens !== false) {
        units.push({ start: first.start, end: last.end, level: first.level, tokens, whole: true });
        i = next;
        continue;
      }
    }
    // A row too big for a chunk splits into words; a code block into lines, each kept whole if it fits.
    for (; i < next; i++) pushUnits(units, text, spans[i]!, maxTokens, first.group !== undefined);
  }
  return units;
}

/**
 * Splits one unit into smaller ones of at most `maxTokens` each: into words if it has
 * whitespace, else into token runs. Returns [unit] unchanged when it cannot be split.
 */
export function refineUnit(text: string, unit: Unit, maxTokens: number): Unit[] {
  const words = splitWords(text, unit);
  const out: Unit[] = [];
  if (words.length > 1) {
    for (const word of words) pushUnits(out, text, word, maxTokens);
  } else {
    pushTokenRuns(out, text, unit, Math.max(1, maxTokens));
  }
  return out;
}

function pushUnits(out: Unit[], text: string, span: Span, maxTokens: number, whole = false): void {
  const tokens = countTokensWithin(text.slice(span.start, span.end), maxTokens);
  if (tokens !== false) {
    const unit: Unit = { start: span.start, end: span.end, level: span.level, tokens };
    if (whole) unit.whole = true;
    out.push(unit);
    return;
  }
  const words = splitWords(text, span);
  if (words.length > 1) {
    for (const word of words) pushUnits(out, text, word, maxTokens);
  } else {
    pushTokenRuns(out, text, span, maxTokens);
  }
}

/** Cuts a whitespace-free span between tokens into runs of at most `maxTokens` tokens. */
function pushTokenRuns(out: Unit[], text: string, span: Span, maxTokens: number): void {
  const boundaries = tokenBoundaries(text.slice(span.start, span.end));
  let level = span.level;
  let from = 0; // offset into the span
  let fromTokens = 0;
  let next = 0; // first boundary after `from`
  while (next < boundaries.length) {
    let last = next;
    while (last + 1 < boundaries.length && boundaries[last + 1]!.tokens - fromTokens <= maxTokens) last++;
    // A run re-tokenized on its own can differ from its slice of the whole: count it, and
    // give back boundaries until it fits.
    let tokens = countTokensWithin(text.slice(span.start + from, span.start + boundaries[last]!.offset), maxTokens);
    while (tokens === false && last > next) {
      last--;
      tokens = countTokensWithin(text.slice(span.start + from, span.start + boundaries[last]!.offset), maxTokens);
    }
    const end = boundaries[last]!.offset;
    if (tokens === false) {
      // Tokens straddling characters left no boundary within the limit (not seen in practice:
      // in samples of every script, cl100k_base left one every 4 tokens at most). Cut between
      // characters instead.
      pushCharacterRuns(out, text, span.start + from, span.start + end, level, maxTokens);
    } else {
      out.push({ start: span.start + from, end: span.start + end, level, tokens });
    }
    level = BREAK.token;
    from = end;
    fromTokens = boundaries[last]!.tokens;
    next = last + 1;
  }
}

/** Greedy runs of whole characters of at most `maxTokens` (a single character may exceed it). */
function pushCharacterRuns(out: Unit[], text: string, start: number, end: number, level: Unit["level"], maxTokens: number): void {
  const next = (i: number) => i + (text.codePointAt(i)! > 0xffff ? 2 : 1);
  for (let from = start; from < end; level = BREAK.token) {
    let to = next(from);
    let tokens = countTokens(text.slice(from, to));
    while (to < end) {
      const count = countTokens(text.slice(from, next(to)));
      if (count > maxTokens) break;
      to = next(to);
      tokens = count;
    }
    out.push({ start: from, end: to, level, tokens });
    from = to;
  }
}
