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
 * counts are cached: a map lookup instead of the library's rank lookup and merge, per piece.
 * A property test holds the sum equal to the library's count on any text.
 */
const PIECES = /'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s/gu;
const CACHED_PIECE_CHARS = 48;
const CACHE_ENTRIES = 100_000;
const pieceTokens = new Map<string, number>();

/** The tokens of `text`; once past `limit`, it stops counting and returns what it has (more than `limit`). */
function countBlock(text: string, limit: number): number {
  let total = 0;
  for (const piece of text.match(PIECES) ?? []) {
    let tokens = pieceTokens.get(piece);
    if (tokens === undefined) {
      tokens = countAll(piece, AS_TEXT);
      if (piece.length <= CACHED_PIECE_CHARS) {
        if (pieceTokens.size >= CACHE_ENTRIES) pieceTokens.clear();
        pieceTokens.set(piece, tokens);
      }
    }
    total += tokens;
    if (total > limit) return total;
  }
  return total;
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

/**
 * [from, to) ranges covering `text`, cut inside runs longer than MAX_RUN (digits need no cut:
 * the tokenizer splits them in threes). Lazy, so that counting up to a limit stops scanning too.
 */
function* blocks(text: string): Generator<[number, number]> {
  if (text.length <= MAX_RUN) {
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
