import fc from "fast-check";
import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { decodeLegacy } from "./encoding.ts";

const decodeLegacyText = (bytes: Uint8Array) => decodeLegacy(bytes).text;

const GERMAN = "Grüße aus München! Die Straße ist schön, und der Bär läuft über die Brücke. Café für alle.";
const RUSSIAN = "Привет, мир! Это проверка кодировки текста на русском языке. Съешь же ещё этих мягких булок.";

describe("decodeLegacyText: Unicode", () => {
  it("reads pure ASCII as UTF-8", () => {
    expect(decodeLegacy(new TextEncoder().encode("plain ASCII, nothing else\n"))).toEqual({
      text: "plain ASCII, nothing else\n",
      encoding: "utf-8",
    });
  });

  it("reads UTF-8 with and without a byte order mark", () => {
    const bytes = new TextEncoder().encode(`${RUSSIAN}\r\n🦊`);
    expect(decodeLegacyText(bytes)).toBe(`${RUSSIAN}\n🦊`);
    expect(decodeLegacyText(Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes]))).toBe(`${RUSSIAN}\n🦊`);
  });

  it("reads UTF-16 LE and BE with a byte order mark", () => {
    const text = "Grüße 🦊\r\nзвёзды\rend";
    const le = Uint8Array.from([0xff, 0xfe, ...iconv.encode(text, "utf-16le")]);
    const be = Uint8Array.from([0xfe, 0xff, ...iconv.encode(text, "utf-16be")]);
    expect(decodeLegacy(le)).toEqual({ text: "Grüße 🦊\nзвёзды\nend", encoding: "utf-16le" });
    expect(decodeLegacy(be)).toEqual({ text: "Grüße 🦊\nзвёзды\nend", encoding: "utf-16be" });
  });
});

describe("decodeLegacyText: legacy 8-bit encodings", () => {
  it("reads a Latin-1 text with é, ß and ü as windows-1252", () => {
    expect(decodeLegacy(iconv.encode(GERMAN, "latin1"))).toEqual({ text: GERMAN, encoding: "windows-1252" });
  });

  it("reads windows-1252's own characters (€, curly quotes, dashes)", () => {
    const text = "Le café coûte 3 € – « très » “cher”… déjà vu à l’église.";
    expect(decodeLegacyText(iconv.encode(text, "windows-1252"))).toBe(text);
  });

  it("reads Cyrillic in KOI8-R and in windows-1251", () => {
    expect(decodeLegacy(iconv.encode(RUSSIAN, "koi8-r"))).toEqual({ text: RUSSIAN, encoding: "KOI8-R" });
    expect(decodeLegacy(iconv.encode(RUSSIAN, "windows-1251"))).toEqual({ text: RUSSIAN, encoding: "windows-1251" });
  });

  it("reads Japanese in Shift_JIS", () => {
    const text = "日本語のテキストです。これはシフトJISのテストです。";
    expect(decodeLegacyText(iconv.encode(text, "shift_jis"))).toBe(text);
  });

  it("falls back to windows-1252 when the statistics say nothing", () => {
    expect(decodeLegacy(Uint8Array.from([0x63, 0x61, 0x66, 0xe9]))).toEqual({ text: "café", encoding: "windows-1252" });
  });

  it("detects from the lines that hold non-ASCII bytes when the file is large", () => {
    const ascii = "An ordinary line of English text without any accents at all.\n".repeat(2000);
    const bytes = Uint8Array.from([...iconv.encode(ascii, "ascii"), ...iconv.encode(`${RUSSIAN}\n`.repeat(3), "koi8-r")]);
    expect(bytes.length).toBeGreaterThan(64 * 1024);
    expect(decodeLegacy(bytes)).toEqual({ text: ascii + `${RUSSIAN}\n`.repeat(3), encoding: "KOI8-R" });
  });

  it("decodes any bytes, the same way every time", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const first = decodeLegacy(bytes);
        expect(typeof first.text).toBe("string");
        expect(decodeLegacy(bytes)).toEqual(first);
      }),
      { numRuns: 300 },
    );
  });
});
