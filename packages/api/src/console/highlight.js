// @ts-check
/**
 * Marks the query's words in a chunk. The terms are the ones the service searches with (its
 * stopwords dropped unless nothing else remains); a word is marked when it has a term's stem
 * (heron, herons; migrate, migrating), accents and case aside, as the index's stemming and
 * folding match them.
 */
import { h } from "./dom.js";
import { STOPWORDS } from "./stopwords.js";

const WORD = /[\p{L}\p{N}]+/gu;

/** @param {string} s */
const fold = (s) => s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

/** @param {string} query */
export function queryTerms(query) {
  const words = [...new Set(fold(query).match(WORD) ?? [])];
  const kept = words.filter((w) => !STOPWORDS.has(w));
  return kept.length > 0 ? kept : words;
}

/** Endings taken off before comparing, longest first; a few become what the bare word ends with. */
/** @type {[string, string][]} */
const ENDINGS = [
  ["ies", "y"],
  ["ing", ""],
  ["ed", ""],
  ["es", ""],
  ["s", ""],
  ["e", ""],
];

/**
 * A rough English stem, enough to tell that two words are one: herons and heron, wading and
 * waded and wade, studies and study, stopped and stop. Not the index's stemmer, only near it.
 * @param {string} word
 */
export function stem(word) {
  let w = fold(word);
  for (const [ending, put] of ENDINGS) {
    if (!w.endsWith(ending) || w.length - ending.length < 3) continue;
    if (ending === "s" && w.endsWith("ss")) break;
    w = w.slice(0, -ending.length) + put;
    break;
  }
  // A doubled last consonant is written once (stopp, stop; fall, fal).
  return /([b-df-hj-np-tv-z])\1$/.test(w) ? w.slice(0, -1) : w;
}

/**
 * @param {string} word
 * @param {Set<string>} stems
 */
const matches = (word, stems) => stems.has(stem(word));

/**
 * The text with each matching word in a <mark>.
 * @param {string} text
 * @param {string[]} terms
 * @returns {(string | HTMLElement)[]}
 */
export function highlighted(text, terms) {
  if (terms.length === 0) return [text];
  const stems = new Set(terms.map(stem));
  /** @type {(string | HTMLElement)[]} */
  const out = [];
  let at = 0;
  for (const m of text.matchAll(WORD)) {
    if (!matches(m[0], stems)) continue;
    if (m.index > at) out.push(text.slice(at, m.index));
    out.push(h("mark", null, m[0]));
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}
