/**
 * Bytes to text for every text format. Detection ("is this text?") and extraction ("what does
 * it say?") both go through `decodeText`, so they can never disagree about a file.
 */

import { decodeLegacy } from "./encoding.ts";

/** "utf-8", "utf-16le", "utf-16be", or the legacy 8-bit encoding detected (e.g. "windows-1251"). */
export type TextEncodingName = string;

export interface DecodedText {
  /** The text without its byte order mark, with CRLF and lone CR turned into LF. */
  text: string;
  encoding: TextEncodingName;
}

// `fatal` makes malformed input throw instead of silently becoming U+FFFD: that is the test.
// TextDecoder drops a leading byte order mark by itself.
const utf8 = new TextDecoder("utf-8", { fatal: true });
const utf16le = new TextDecoder("utf-16le", { fatal: true });
const utf16be = new TextDecoder("utf-16be", { fatal: true });

/** The text in `bytes`, or undefined when they are not text (binary, or an encoding we cannot tell). */
export function decodeText(bytes: Uint8Array): DecodedText | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decodeUtf16(bytes, utf16le, "utf-16le");
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decodeUtf16(bytes, utf16be, "utf-16be");
  // NUL never occurs in text files; UTF-16 without a byte order mark ends up here too, on purpose.
  if (bytes.includes(0)) return undefined;
  try {
    return { text: normaliseNewlines(utf8.decode(bytes)), encoding: "utf-8" };
  } catch {
    // Not UTF-8: maybe a legacy 8-bit file (Excel's CSV export on Windows, old Cyrillic or
    // Western European texts); which code page is detected from the byte statistics.
  }
  if (isPlausibleSingleByteText(bytes)) {
    const { text, encoding } = decodeLegacy(bytes);
    return { text: normaliseNewlines(text), encoding };
  }
  return undefined;
}

export function normaliseNewlines(text: string): string {
  return text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
}

function decodeUtf16(bytes: Uint8Array, decoder: typeof utf16le, encoding: TextEncodingName): DecodedText | undefined {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return undefined; // odd length or unpaired surrogates: not UTF-16 after all
  }
  if (text.includes("\0")) return undefined;
  return { text: normaliseNewlines(text), encoding };
}

/**
 * A legacy 8-bit text file has no control bytes besides tab, newline, form feed and carriage
 * return. Binary data of any length almost never passes: about one byte in eight fails.
 */
function isPlausibleSingleByteText(bytes: Uint8Array): boolean {
  for (const b of bytes) {
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d) return false;
    if (b === 0x7f) return false;
  }
  return true;
}
