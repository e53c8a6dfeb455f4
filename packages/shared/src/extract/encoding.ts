/**
 * Bytes of a plain-text file in whatever encoding it was saved in, to a string. A byte order
 * mark is believed; then valid UTF-8 is UTF-8 (pure ASCII included); anything else is a
 * legacy encoding guessed by chardet's statistics and decoded with iconv-lite. When the guess
 * is weak, or decodes to replacement characters, the answer is windows-1252: the most common
 * legacy encoding, and one that decodes every byte, so the result never depends on luck.
 */
import { analyse, type Match } from "chardet";
import iconv from "iconv-lite";

export interface LegacyDecoded {
  /** The text without its byte order mark, with CRLF and lone CR turned into LF. */
  text: string;
  /** The iconv-lite / WHATWG name of the encoding used, e.g. "utf-8", "KOI8-R", "windows-1252". */
  encoding: string;
}

export const FALLBACK_ENCODING = "windows-1252";

/** chardet's weakest guesses are noise (a German text scores 10 for Shift_JIS). */
const MIN_CONFIDENCE = 20;

/** chardet reads at most this many bytes; on a large file, only lines with non-ASCII bytes. */
const SAMPLE_BYTES = 64 * 1024;

// Names chardet reports that are not legacy encodings to decode with iconv-lite: UTF-8 has
// already failed by then, UTF-16/32 without a byte order mark is left alone on purpose, and
// ISO-2022 is 7-bit (valid UTF-8, so it never gets here).
const NOT_LEGACY = /^(?:ascii|utf-|iso[-_]2022|mbcs|sbcs)/i;

const utf8Strict = new TextDecoder("utf-8", { fatal: true });
const utf8Lenient = new TextDecoder("utf-8");
const utf16le = new TextDecoder("utf-16le");
const utf16be = new TextDecoder("utf-16be");

export function decodeLegacy(bytes: Uint8Array): LegacyDecoded {
  // TextDecoder drops the byte order mark itself.
  if (startsWith(bytes, 0xef, 0xbb, 0xbf)) return result(utf8Lenient.decode(bytes), "utf-8");
  if (startsWith(bytes, 0xff, 0xfe)) return result(utf16le.decode(bytes), "utf-16le");
  if (startsWith(bytes, 0xfe, 0xff)) return result(utf16be.decode(bytes), "utf-16be");
  try {
    return result(utf8Strict.decode(bytes), "utf-8");
  } catch {
    // not UTF-8: a legacy encoding
  }
  for (const encoding of candidates(bytes)) {
    const text = iconv.decode(bytes, encoding);
    if (!text.includes("\ufffd")) return result(text, encoding);
  }
  return result(iconv.decode(bytes, FALLBACK_ENCODING), FALLBACK_ENCODING);
}

/** The legacy encodings chardet finds likely enough, best first; ties go to windows-1252. */
function candidates(bytes: Uint8Array): string[] {
  const matches = analyse(sample(bytes))
    .filter((m) => m.confidence >= MIN_CONFIDENCE && !NOT_LEGACY.test(m.name))
    .map((m, order) => ({ encoding: iconvName(m), confidence: m.confidence, order }))
    .filter((m) => iconv.encodingExists(m.encoding));
  matches.sort(
    (a, b) =>
      b.confidence - a.confidence ||
      Number(b.encoding === FALLBACK_ENCODING) - Number(a.encoding === FALLBACK_ENCODING) ||
      a.order - b.order,
  );
  return [...new Set(matches.map((m) => m.encoding))];
}

// ISO-8859-1 leaves 0x80–0x9F to control characters that no text contains; windows-1252 puts
// €, curly quotes and dashes there, which is what such files hold (WHATWG decodes it so too).
function iconvName(match: Match): string {
  return match.name === "ISO-8859-1" ? FALLBACK_ENCODING : match.name;
}

/**
 * Statistics over a small file's whole bytes; over a large one, over whole lines holding
 * non-ASCII bytes (the only ones that tell encodings apart), with their words as context.
 */
function sample(bytes: Uint8Array): Uint8Array {
  if (bytes.length <= SAMPLE_BYTES) return bytes;
  const picked = new Uint8Array(SAMPLE_BYTES);
  let size = 0;
  let lineStart = 0;
  let nonAscii = false;
  for (let i = 0; i <= bytes.length && size < SAMPLE_BYTES; i++) {
    const b = i < bytes.length ? bytes[i]! : 0x0a;
    if (b >= 0x80) nonAscii = true;
    if (b !== 0x0a) continue;
    if (nonAscii) {
      const line = bytes.subarray(lineStart, Math.min(i + 1, lineStart + SAMPLE_BYTES - size));
      picked.set(line, size);
      size += line.length;
    }
    lineStart = i + 1;
    nonAscii = false;
  }
  return picked.subarray(0, size);
}

function startsWith(bytes: Uint8Array, ...prefix: number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

function result(text: string, encoding: string): LegacyDecoded {
  return { text: text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text, encoding };
}
