/**
 * Token-aware chunking with overlap, for embedding and lexical search alike.
 *
 * A chunk holds at most `chunkTokens` tokens and ends at the best break in reach: before a
 * Markdown heading, else at a blank line or sentence end that leaves it at least half full,
 * else between words; an unbroken run (no whitespace at all) is cut where the chunk is full.
 * The next chunk starts about `overlapTokens` earlier (whole sentences when they fit), except
 * after a heading break, where it starts afresh at the heading.
 *
 * A table row or fenced code block that fits in a chunk is one unit and is never cut: not to
 * end a chunk, nor to start the next one's overlap (which is left out when the block is too
 * big to repeat, or gives way when the block needs the room). A bigger code block is cut only
 * at its line breaks, unless a single line is too big for a chunk.
 *
 * `text === source.slice(start, end)` always holds; chunks never start or end with whitespace.
 */
import { BREAK } from "./segment.ts";
import { countTokens, countTokensWithin } from "./tokenizer.ts";
import { buildUnits, refineUnit, type Unit } from "./units.ts";

export interface Chunk {
  index: number;
  text: string;
  /** UTF-16 offsets into the extracted text. */
  start: number;
  end: number;
  tokens: number;
}

export interface ChunkOptions {
  chunkTokens: number;
  overlapTokens: number;
}

export const DEFAULT_CHUNK_TOKENS = 512;
export const DEFAULT_CHUNK_OVERLAP_TOKENS = 64;
/** One character can take up to 4 tokens; units of half a chunk must be able to hold one. */
export const MIN_CHUNK_TOKENS = 8;

// A paragraph or sentence end that leaves a chunk less than half full loses to a later, weaker break.
const MIN_FILL = 0.5;

export function chunkText(text: string, opts: ChunkOptions): Chunk[] {
  checkOptions(opts);
  const start = text.length - text.trimStart().length;
  const end = text.trimEnd().length;
  if (start >= end) return [];
  const whole = text.slice(start, end);
  const tokens = countTokensWithin(whole, opts.chunkTokens);
  if (tokens !== false) return [{ index: 0, text: whole, start, end, tokens }];
  // Units leave room for the overlap, so a chunk always has space for the next one; an
  // overlap of more than half a chunk gives way instead (it shrinks to fit the next unit).
  const unitTokens = Math.max(opts.chunkTokens - opts.overlapTokens, Math.ceil(opts.chunkTokens / 2));
  // A table row or code block that fits in a chunk stays one unit; the overlap gives way to it.
  const units = buildUnits(text, start, end, unitTokens, opts.chunkTokens);
  return new Packer(text, units, opts).run();
}

function checkOptions({ chunkTokens, overlapTokens }: ChunkOptions): void {
  if (!Number.isInteger(chunkTokens) || chunkTokens < MIN_CHUNK_TOKENS) {
    throw new RangeError(`chunkTokens must be an integer of at least ${MIN_CHUNK_TOKENS}, got ${chunkTokens}`);
  }
  if (!Number.isInteger(overlapTokens) || overlapTokens < 0 || overlapTokens >= chunkTokens) {
    throw new RangeError(`overlapTokens must be an integer from 0 to chunkTokens - 1, got ${overlapTokens}`);
  }
}

/** Packs units into chunks. Sums of unit counts are estimates; every chunk is counted exactly before it is kept. */
class Packer {
  private readonly text: string;
  private readonly units: Unit[];
  private readonly budget: number;
  private readonly overlap: number;
  private readonly gapTokens = new Map<string, number>();

  constructor(text: string, units: Unit[], opts: ChunkOptions) {
    this.text = text;
    this.units = units;
    this.budget = opts.chunkTokens;
    this.overlap = opts.overlapTokens;
  }

  run(): Chunk[] {
    const units = this.units;
    const chunks: Chunk[] = [];
    // units[from, firstNew) repeat the end of the previous chunk; units[firstNew, end) are new.
    let from = 0;
    let firstNew = 0;
    while (firstNew < units.length) {
      while (from < firstNew && this.estimate(from, firstNew + 1) > this.budget) from++;
      let end = this.chooseEnd(from, firstNew);
      let tokens = countTokensWithin(this.slice(from, end), this.budget);
      while (tokens === false) {
        if (end - 1 > firstNew) {
          end--;
        } else if (this.split(firstNew, Math.ceil(units[firstNew]!.tokens / 2)) > 0) {
          end = firstNew + 1;
        } else if (from < firstNew) {
          from++;
        } else {
          tokens = countTokens(this.slice(from, end)); // one unit: within budget by construction
          break;
        }
        tokens = countTokensWithin(this.slice(from, end), this.budget);
      }
      chunks.push({ index: chunks.length, text: this.slice(from, end), start: units[from]!.start, end: units[end - 1]!.end, tokens });
      if (end >= units.length) break;
      [from, firstNew] = this.nextStart(from, end);
    }
    return chunks;
  }

  /** Where the chunk starting at `from` should end (exclusive unit index); it takes at least one new unit. */
  private chooseEnd(from: number, firstNew: number): number {
    const units = this.units;
    const fills: number[] = []; // fills[i]: estimated tokens of units[from, from + i + 1)
    let fill = 0;
    let stop = from;
    for (; stop < units.length; stop++) {
      const add = units[stop]!.tokens + (stop > from ? this.gap(stop - 1, stop) : 0);
      if (stop > firstNew && fill + add > this.budget) break;
      fill += add;
      fills.push(fill);
    }
    if (stop === units.length) return stop;
    const latest = [-1, -1, -1, -1, -1]; // the latest cut before a unit with each break level
    for (let cut = stop; cut > firstNew; cut--) {
      const level = units[cut]!.level;
      if (latest[level] === -1) latest[level] = cut;
    }
    const heading = latest[BREAK.heading]!;
    if (heading > 0) return heading;
    for (const level of [BREAK.paragraph, BREAK.sentence, BREAK.word]) {
      const cut = latest[level]!;
      if (cut > 0 && fills[cut - from - 1]! >= MIN_FILL * this.budget) return cut;
    }
    // Nothing fills half the chunk: the next unit is big (a long sentence, or a piece of an
    // unbroken run, which must be cut somewhere anyway). Take as much as fits.
    return stop;
  }

  /** The next chunk's first unit (overlap included) and first new unit, after a chunk ending before `end`. */
  private nextStart(from: number, end: number): [number, number] {
    const units = this.units;
    if (this.overlap === 0 || units[end]!.level === BREAK.heading) return [end, end];
    // Split the last unit until its tail fits in the overlap: a long sentence yields its last words.
    for (;;) {
      const room = this.overlap - this.gap(end - 1, end);
      const last = units[end - 1]!;
      if (room <= 0 || last.tokens <= room) break;
      const parts = this.split(end - 1, room);
      if (parts === 0) break;
      end += parts - 1;
    }
    let start = this.overlapStart(from, end);
    // A chunk of one small unit can only be repeated in part: split it so that its tail can be.
    if (start === end && end - 1 === from) {
      const parts = this.split(from, Math.ceil(units[from]!.tokens / 2));
      end += Math.max(parts - 1, 0);
      start = this.overlapStart(from, end);
    }
    return [start, end];
  }

  /** The first unit of the longest tail of units[from + 1, end) that fits in the overlap. */
  private overlapStart(from: number, end: number): number {
    let start = end;
    let sum = this.gap(end - 1, end);
    while (start - 1 > from) {
      const unit = this.units[start - 1]!;
      const add = unit.tokens + (start < end ? this.gap(start - 1, start) : 0);
      if (sum + add > this.overlap) break;
      sum += add;
      start--;
      if (unit.level === BREAK.heading) break; // the overlap does not reach back past a heading
    }
    return start;
  }

  /** Replaces units[i] by units of at most `maxTokens`; returns how many, or 0 when it cannot (or must not) be split. */
  private split(i: number, maxTokens: number): number {
    if (this.units[i]!.whole) return 0;
    const parts = refineUnit(this.text, this.units[i]!, maxTokens);
    if (parts.length <= 1) return 0;
    this.units.splice(i, 1, ...parts);
    return parts.length;
  }

  private estimate(from: number, to: number): number {
    let sum = 0;
    for (let i = from; i < to; i++) sum += this.units[i]!.tokens + (i > from ? this.gap(i - 1, i) : 0);
    return sum;
  }

  /** Tokens of the whitespace between two units; a single space merges into the next word's token. */
  private gap(before: number, after: number): number {
    const whitespace = this.text.slice(this.units[before]!.end, this.units[after]!.start);
    if (whitespace === "" || whitespace === " ") return 0;
    let tokens = this.gapTokens.get(whitespace);
    if (tokens === undefined) {
      tokens = countTokens(whitespace);
      this.gapTokens.set(whitespace, tokens);
    }
    return tokens;
  }

  private slice(from: number, end: number): string {
    return this.text.slice(this.units[from]!.start, this.units[end - 1]!.end);
  }
}
