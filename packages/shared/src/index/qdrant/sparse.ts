/**
 * The lexical side of the Qdrant index: BM25 as a sparse vector computed here, with the IDF
 * half left to Qdrant (the sparse vector is configured with `modifier: "idf"`, so Qdrant
 * multiplies each query term by the term's IDF over the collection at query time).
 *
 * - Tokens: the words of `queryTerms` (letters and digits, lower-cased), then a plural
 *   stemmer, on both sides. Stopwords (`STOPWORDS`) get no term on either side: queries drop
 *   them, so a document's would only be stored; they still count towards a text's length. A
 *   query of stopwords alone then finds nothing, as in the embedded index (whose tokenizer
 *   drops them too). Collections written before keep their stopword terms until written again.
 * - Index: murmur3 (x86, 32 bit, seed 0) of the token's UTF-8, as `|i32|`, the way Qdrant's
 *   `qdrant/bm25` model numbers tokens. Its tokens differ from ours (another stemmer, and it
 *   drops stopwords), so vectors from that model and from here must not be mixed.
 * - Document value: BM25's term-frequency part, tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)),
 *   with FTS5's k1 = 1.2 and b = 0.75 and a fixed avglen (chunks have a bounded size).
 * - Query value: 1 per distinct term.
 */
import type { Schemas } from "@qdrant/js-client-rest";
import { STOPWORDS, wordsOf } from "../../search/query-terms.ts";

export type SparseVector = Schemas["SparseVector"];

export const BM25 = { k1: 1.2, b: 0.75, avgLength: 256 } as const;

/**
 * Harman's "S" stemmer: English plurals only (herons → heron, studies → study). It never
 * merges unrelated words, which is all a lexical index without a dictionary can promise.
 */
export function stem(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith("ies") && !word.endsWith("eies") && !word.endsWith("aies")) return `${word.slice(0, -3)}y`;
  if (word.endsWith("es") && !word.endsWith("aes") && !word.endsWith("ees") && !word.endsWith("oes")) return word.slice(0, -1);
  if (word.endsWith("s") && !word.endsWith("us") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** Room to encode a token without allocating; a longer one gets a buffer of its own. */
const encoded = Buffer.allocUnsafe(1024);

/** A token's index: murmur3 of its UTF-8 bytes (seed 0) as |i32|, like Qdrant's `qdrant/bm25`. */
export function tokenId(token: string): number {
  if (token.length * 3 > encoded.length) return Math.abs(murmur3(Buffer.from(token, "utf8")) | 0);
  return Math.abs(murmur3(encoded, 0, encoded.write(token, "utf8")) | 0);
}

/** MurmurHash3, x86 32-bit variant, of `bytes`' first `length`, as an unsigned 32-bit integer. */
export function murmur3(bytes: Uint8Array, seed = 0, length = bytes.length): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h = seed | 0;
  const whole = length - (length % 4);
  for (let i = 0; i < whole; i += 4) {
    let k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const tail = length - whole;
  if (tail > 0) {
    let k = 0;
    if (tail === 3) k ^= bytes[whole + 2]! << 16;
    if (tail >= 2) k ^= bytes[whole + 1]! << 8;
    k ^= bytes[whole]!;
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
  }
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Counts per token id of the words but stopwords, each distinct word stemmed and hashed once;
 * two tokens whose ids collide count as one term, as in Qdrant's model.
 */
function countIds(words: readonly string[]): Map<number, number> {
  const perWord = new Map<string, number>();
  for (const word of words) if (!STOPWORDS.has(word)) perWord.set(word, (perWord.get(word) ?? 0) + 1);
  const counts = new Map<number, number>();
  for (const [word, count] of perWord) {
    const id = tokenId(stem(word));
    counts.set(id, (counts.get(id) ?? 0) + count);
  }
  return counts;
}

function toVector(counts: Map<number, number>, weight: (count: number) => number): SparseVector {
  const indices = [...counts.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((i) => weight(counts.get(i)!)) };
}

/** The sparse vector of a chunk's text; empty (no indices) when it has no words but stopwords. */
export function documentVector(text: string): SparseVector {
  const words = wordsOf(text); // stopwords included: they count towards its length
  const norm = BM25.k1 * (1 - BM25.b + (BM25.b * words.length) / BM25.avgLength);
  return toVector(countIds(words), (tf) => (tf * (BM25.k1 + 1)) / (tf + norm));
}

/** The sparse vector of a query's terms (from `queryTerms`): weight 1 per distinct term. */
export function queryVector(terms: readonly string[]): SparseVector {
  const ids = new Map<number, number>();
  for (const id of new Set(terms.map((t) => tokenId(stem(t))))) ids.set(id, 1);
  return toVector(ids, (w) => w);
}
