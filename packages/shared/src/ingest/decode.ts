/**
 * Bytes to text for every text format. Detection ("is this text?") and extraction ("what does
 * it say?") both go through `decodeText`, so they can never disagree about a file.
 */

export type TextEncodingName = "utf-8" | "utf-16le" | "utf-16be" | "windows-1252";

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
const windows1252 = new TextDecoder("windows-1252");

/** The text in `bytes`, or undefined when they are not text (binary, or an encoding we cannot tell). */
export function decodeText(bytes: Uint8Array): DecodedText | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decodeUtf16(bytes, utf16le, "utf-16le");
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decodeUtf16(bytes, utf16be, "utf-16be");
  // NUL never occurs in text files; UTF-16 without a byte order mark ends up here too, on purpose.
  if (bytes.includes(0)) return undefined;
  try {
    return { text: normaliseNewlines(utf8.decode(bytes)), encoding: "utf-8" };
  } catch {
    // Not UTF-8: maybe a legacy single-byte file (Excel's CSV export on Windows is the usual one).
  }
  if (isPlausibleWindows1252(bytes)) {
    return { text: normaliseNewlines(windows1252.decode(bytes)), encoding: "windows-1252" };
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
 * A single-byte text file has no control bytes besides tab, newline, form feed and carriage
 * return, and none of the five bytes windows-1252 leaves undefined. Binary data of any length
 * almost never passes: about one byte in seven fails the test.
 */
function isPlausibleWindows1252(bytes: Uint8Array): boolean {
  for (const b of bytes) {
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d) return false;
    if (b === 0x7f || b === 0x81 || b === 0x8d || b === 0x8f || b === 0x90 || b === 0x9d) return false;
  }
  return true;
}
