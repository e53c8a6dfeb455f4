/**
 * Token counting for chunking, with the cl100k_base encoding: the one OpenAI's embedding
 * models (text-embedding-3-small/large, ada-002) use, so a chunk's count is what the embedder
 * sees. The vocabulary loads with this module; it is constant data, not configuration.
 *
 * One deviation from plain cl100k_base, for safety: BPE time grows with the square of a
 * pre-token piece's length (100 KB of "aaaa…" takes seconds, 1 MB of unbroken CJK far longer),
 * so runs of more than MAX_RUN characters of one kind are tokenized in MAX_RUN-character
 * blocks. Ordinary prose never has such runs and is counted exactly.
 */
import { countTokens as countAll, decodeGenerator, encode } from "gpt-tokenizer/encoding/cl100k_base";

// Documents may contain "<|endoftext|>" literally: tokenize it as text instead of throwing.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

const MAX_RUN = 1000;

/**
 * cl100k_base's pre-tokenizer: BPE runs on each piece this cuts out, and a piece's tokens never
 * depend on its neighbours. Prose repeats its pieces (words with their leading space), so their
 * counts are cached (PieceCache). Pieces of ASCII characters, nearly all of prose, are cut by
 * hand (asciiPieceEnd); the expression cuts those that touch another character. It is sticky
 * (`y`): a piece found at a given position, as the expression has no look-behind, is the one a
 * match of the whole text finds there. Property tests hold the pieces equal to the expression's
 * and the sum equal to the library's count, on any text.
 */
const PIECE_AT =
  /'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s/uy;
const CACHED_PIECE_CHARS = 48;
const CACHE_ENTRIES = 100_000;
const CACHE_SLOTS = 1 << 18; // a power of two, well above CACHE_ENTRIES
/** ASCII pieces up to this long are their own key: four characters to each of a slot's three key words. */
const PACKED_CHARS = 12;
const KEPT = 0x8000; // in a slot's last word: the piece is kept as a string, its key words are a hash

/**
 * Token counts of the pieces seen, in an open-addressing table of four words a slot: three key
 * words, then length << 16 | KEPT? | tokens. A piece is looked up where it lies in the text,
 * without being cut out of it (the copy and a Map's hashing of it cost more than the lookup).
 * An ASCII piece of up to PACKED_CHARS characters (nearly all of prose) is its own key, so its
 * lookup reads one slot and nothing else; another piece is keyed by a hash and compared with
 * the string kept for it. Pieces longer than CACHED_PIECE_CHARS are counted each time; the
 * table is emptied when it holds CACHE_ENTRIES.
 */
class PieceCache {
  readonly #slots = new Int32Array(4 * CACHE_SLOTS);
  readonly #pieces: (string | undefined)[] = new Array<string | undefined>(CACHE_SLOTS).fill(undefined);
  #size = 0;

  /** The tokens of text[start, end). */
  count(text: string, start: number, end: number): number {
    const length = end - start;
    if (length > CACHED_PIECE_CHARS) return countAll(text.slice(start, end), AS_TEXT);
    let k0 = 0;
    let k1 = 0;
    let k2 = 0;
    let kept = length > PACKED_CHARS;
    if (!kept) {
      let chars = 0; // the OR of the characters: past ASCII if it is
      // The three words as one 96-bit register, each character shifted in at the low end.
      for (let i = start; i < end; i++) {
        const c = text.charCodeAt(i);
        chars |= c;
        k0 = (k0 << 8) | (k1 >>> 24);
        k1 = (k1 << 8) | (k2 >>> 24);
        k2 = (k2 << 8) | c;
      }
      kept = chars >= 0x80;
    }
    let h: number;
    if (kept) {
      h = 0x811c9dc5; // FNV-1a
      for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
      k0 = h;
      k1 = k2 = 0;
    } else {
      h = k0 ^ Math.imul(k1, 0x9e3779b1) ^ Math.imul(k2 ^ length, 0x85ebca6b);
    }
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d); // a final mix, so that the low bits depend on every character
    h ^= h >>> 12;
    const head = (length << 16) | (kept ? KEPT : 0);
    const slots = this.#slots;
    const mask = CACHE_SLOTS - 1;
    let slot = h & mask;
    // A slot in use has a nonzero last word (every piece has a length).
    for (let meta = slots[4 * slot + 3]!; meta !== 0; meta = slots[4 * slot + 3]!) {
      if ((meta & ~0x7fff) === head && slots[4 * slot] === k0 && slots[4 * slot + 1] === k1 && slots[4 * slot + 2] === k2) {
        if (!kept || text.startsWith(this.#pieces[slot]!, start)) return meta & 0x7fff;
      }
      slot = (slot + 1) & mask;
    }
    const piece = text.slice(start, end);
    const tokens = countAll(piece, AS_TEXT);
    if (this.#size >= CACHE_ENTRIES) {
      slots.fill(0);
      this.#pieces.fill(undefined);
      this.#size = 0;
      slot = h & mask;
    }
    slots[4 * slot] = k0;
    slots[4 * slot + 1] = k1;
    slots[4 * slot + 2] = k2;
    slots[4 * slot + 3] = head | tokens;
    if (kept) this.#pieces[slot] = piece;
    this.#size++;
    return tokens;
  }
}

const pieceCache = new PieceCache();

/** Where the piece that starts at `start` ends: cut by hand when it is ASCII and ends before any other character. */
function pieceEnd(text: string, start: number): number {
  if (text.charCodeAt(start) < 0x80) {
    const end = asciiPieceEnd(text, start);
    if (end !== -1) return end;
  }
  PIECE_AT.lastIndex = start;
  PIECE_AT.exec(text); // it matches everywhere: its last alternatives take any single character
  return PIECE_AT.lastIndex;
}

/** The tokens of `text`; once past `limit`, it stops counting and returns what it has (more than `limit`). */
function countBlock(text: string, limit: number): number {
  let total = 0;
  for (let start = 0; start < text.length; ) {
    const end = pieceEnd(text, start);
    total += pieceCache.count(text, start, end);
    if (total > limit) return total;
    start = end;
  }
  return total;
}

/** The pieces the pre-tokenizer cuts `text` into, the way countBlock cuts them (for the tests). */
export function preTokenize(text: string): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    const end = pieceEnd(text, start);
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

export function countTokens(text: string): number {
  let total = 0;
  for (const [from, to] of blocks(text)) total += countBlock(from === 0 && to === text.length ? text : text.slice(from, to), Infinity);
  return total;
}

/** The token count if it is at most `limit`, else false; stops tokenizing once past the limit. */
export function countTokensWithin(text: string, limit: number): number | false {
  let total = 0;
  for (const [from, to] of blocks(text)) {
    total += countBlock(from === 0 && to === text.length ? text : text.slice(from, to), limit - total);
    if (total > limit) return false;
  }
  return total;
}

export interface TokenBoundary {
  /** Tokens from the start of the text up to `offset`. */
  tokens: number;
  /** A UTF-16 offset into the text; never inside a surrogate pair or a multi-token character. */
  offset: number;
}

/**
 * Where `text` can be cut between tokens, in order; the last boundary is the end of the text.
 * Used to split a run with no better break (a long URL, a base64 blob, unspaced CJK).
 */
export function tokenBoundaries(text: string): TokenBoundary[] {
  const boundaries: TokenBoundary[] = [];
  let tokensBefore = 0;
  for (const [from, to] of blocks(text)) {
    const tokens = encode(text.slice(from, to), AS_TEXT);
    let consumed = 0;
    function* feed() {
      for (const token of tokens) {
        consumed++;
        yield token;
      }
    }
    let offset = from;
    const first = boundaries.length;
    // decodeGenerator yields only whole characters, after pulling just the tokens they need.
    for (const piece of decodeGenerator(feed())) {
      offset += piece.length;
      boundaries.push({ tokens: tokensBefore + consumed, offset });
    }
    if (offset !== to) {
      // gpt-tokenizer decodes with one shared streaming TextDecoder, which drops a U+FEFF at the
      // very start of its first stream and would carry over bytes another caller left half-way.
      // Then fall back to boundaries at every character, counting a token per UTF-8 byte (an
      // upper bound: pieces come out smaller, never too big).
      boundaries.length = first;
      boundaries.push(...characterBoundaries(text, from, to, tokensBefore));
    }
    tokensBefore += tokens.length;
  }
  return boundaries;
}

function characterBoundaries(text: string, from: number, to: number, tokensBefore: number): TokenBoundary[] {
  const out: TokenBoundary[] = [];
  let tokens = tokensBefore;
  for (let i = from; i < to; ) {
    const codePoint = text.codePointAt(i)!;
    const units = codePoint > 0xffff ? 2 : 1;
    tokens += codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint > 0xffff ? 4 : 3;
    i += units;
    out.push({ tokens, offset: i });
  }
  return out;
}

// Character classes close to the pre-tokenizer's: a piece never spans two runs of these.
const SPACE = 0;
const DIGIT = 1;
const PUNCT = 2;
const LETTER = 3;

const ASCII_CLASSES = Uint8Array.from({ length: 128 }, (_, c) => {
  if (c === 32 || (c >= 9 && c <= 13)) return SPACE;
  if (c >= 48 && c <= 57) return DIGIT;
  const lower = c | 32;
  return lower >= 97 && lower <= 122 ? LETTER : PUNCT;
});

function classOf(c: number): number {
  if (c < 0x80) return ASCII_CLASSES[c]!;
  if (c === 0xa0 || c === 0x3000) return SPACE;
  if ((c >= 0x2000 && c <= 0x206f) || (c >= 0x3001 && c <= 0x303f) || (c >= 0xff00 && c <= 0xff0f)) return PUNCT;
  return LETTER;
}

const CR = 0x0d;
const LF = 0x0a;
const BLANK = 0x20;
const APOSTROPHE = 0x27;
const [LOWER_D, LOWER_E, LOWER_L, LOWER_M, LOWER_R, LOWER_S, LOWER_T, LOWER_V] = [..."delmrstv"].map((c) => c.charCodeAt(0));

/**
 * Where the piece of PIECE_AT that starts at the ASCII character `i` ends: the expression's
 * alternatives in their order, written out for ASCII's letters, digits and whitespace. -1 when
 * it would have to read another character (which the expression's classes may hold).
 */
function asciiPieceEnd(text: string, i: number): number {
  const n = text.length;
  const c = text.charCodeAt(i);
  const next = i + 1 < n ? text.charCodeAt(i + 1) : -1;
  if (next >= 0x80) return -1;
  // '(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])  (c | 32 folds an ASCII letter's case)
  if (c === APOSTROPHE && next !== -1) {
    const a = next | 32;
    if (a === LOWER_S || a === LOWER_D || a === LOWER_M || a === LOWER_T) return i + 2;
    const after = i + 2 < n ? text.charCodeAt(i + 2) : -1;
    if (after >= 0x80) return -1;
    const b = after | 32;
    if ((a === LOWER_L && b === LOWER_L) || (a === LOWER_V && b === LOWER_E) || (a === LOWER_R && b === LOWER_E)) return i + 3;
  }
  const cls = ASCII_CLASSES[c]!;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (cls === LETTER || (cls !== DIGIT && c !== CR && c !== LF && next !== -1 && ASCII_CLASSES[next] === LETTER)) {
    let j = cls === LETTER ? i + 1 : i + 2;
    while (j < n && ASCII_CLASSES[text.charCodeAt(j)] === LETTER) j++;
    return asciiAt(text, j);
  }
  // \p{N}{1,3}
  if (cls === DIGIT) {
    let j = i + 1;
    while (j < n && j < i + 3 && ASCII_CLASSES[text.charCodeAt(j)] === DIGIT) j++;
    return j === i + 3 ? j : asciiAt(text, j);
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  if (cls === PUNCT || (c === BLANK && next !== -1 && ASCII_CLASSES[next] === PUNCT)) {
    let j = cls === PUNCT ? i + 1 : i + 2;
    while (j < n && ASCII_CLASSES[text.charCodeAt(j)] === PUNCT) j++;
    while (j < n && (text.charCodeAt(j) === CR || text.charCodeAt(j) === LF)) j++;
    return asciiAt(text, j);
  }
  // Whitespace: \s+$, else \s*[\r\n] (to the run's last line break), else \s+(?!\S), else \s.
  let j = i + 1;
  while (j < n && ASCII_CLASSES[text.charCodeAt(j)] === SPACE) j++;
  if (j === n) return n;
  if (asciiAt(text, j) === -1) return -1;
  for (let k = j - 1; k >= i; k--) {
    const x = text.charCodeAt(k);
    if (x === CR || x === LF) return k + 1;
  }
  return j - i >= 2 ? j - 1 : i + 1;
}

/** `j`, where an ASCII run stopped: -1 if it stopped at another character rather than at an ASCII one or the end. */
function asciiAt(text: string, j: number): number {
  return j < text.length && text.charCodeAt(j) >= 0x80 ? -1 : j;
}

/**
 * Whether `text` may hold a run longer than MAX_RUN (digits aside), from a few characters per
 * MAX_RUN / 2: such a run covers a whole [p - MAX_RUN / 2, p] for some multiple p of MAX_RUN / 2,
 * and in prose a class changes within a few characters back from each p.
 */
function mayHaveLongRun(text: string): boolean {
  const half = MAX_RUN / 2;
  for (let p = half; p < text.length; p += half) {
    const cls = classOf(text.charCodeAt(p));
    if (cls === DIGIT) continue;
    let q = p - 1;
    while (q >= p - half && classOf(text.charCodeAt(q)) === cls) q--;
    if (q < p - half) return true;
  }
  return false;
}

/**
 * [from, to) ranges covering `text`, cut inside runs longer than MAX_RUN (digits need no cut:
 * the tokenizer splits them in threes). Lazy, so that counting up to a limit stops scanning too.
 */
function* blocks(text: string): Generator<[number, number]> {
  if (text.length <= MAX_RUN || !mayHaveLongRun(text)) {
    yield [0, text.length];
    return;
  }
  let blockStart = 0;
  let runClass = -1;
  let runStart = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const cls = classOf(code);
    if (cls !== runClass) {
      runClass = cls;
      runStart = i;
    } else if (cls !== DIGIT && i - runStart >= MAX_RUN && !(code >= 0xdc00 && code <= 0xdfff)) {
      yield [blockStart, i];
      blockStart = runStart = i;
    }
  }
  yield [blockStart, text.length];
}
