import { describe, expect, it } from "vitest";
import { UnsupportedMediaTypeError } from "../errors.ts";
import { detectType, extensionOf, mediaTypeOf } from "./detect.ts";

const utf8 = (text: string) => new TextEncoder().encode(text);
const bytes = (...parts: Array<number | string>) =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === "number" ? [p] : [...p].map((c) => c.charCodeAt(0)))));

/** A ZIP local file header for `name` followed by `data` stored uncompressed. */
function zipEntry(name: string, data = ""): number[] {
  const header = new Uint8Array(30);
  const view = new DataView(header.buffer);
  view.setUint32(0, 0x04034b50, true);
  view.setUint32(18, data.length, true);
  view.setUint32(22, data.length, true);
  view.setUint16(26, name.length, true);
  return [...header, ...utf8(name), ...utf8(data)];
}
const zip = (...entries: number[][]) => Uint8Array.from([...entries.flat(), ...bytes("PK", 5, 6, 0, 0, 0, 0)]);

function refusal(input: Parameters<typeof detectType>[0]): UnsupportedMediaTypeError {
  try {
    detectType(input);
  } catch (error) {
    expect(error).toBeInstanceOf(UnsupportedMediaTypeError);
    return error as UnsupportedMediaTypeError;
  }
  throw new Error("expected detectType to refuse the input");
}

describe("detectType: formats with an extractor are known by their bytes", () => {
  const cases: Array<[string, Uint8Array, string?]> = [
    ["application/pdf", utf8("%PDF-1.7\n%âãÏÓ\n1 0 obj")],
    [
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      zip(zipEntry("[Content_Types].xml", "<Types/>"), zipEntry("word/document.xml", "<w/>")),
    ],
    [
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      zip(zipEntry("[Content_Types].xml"), zipEntry("xl/workbook.xml")),
    ],
    ["application/vnd.openxmlformats-officedocument.presentationml.presentation", zip(zipEntry("ppt/presentation.xml"))],
    [
      "application/vnd.oasis.opendocument.text",
      zip(zipEntry("mimetype", "application/vnd.oasis.opendocument.text"), zipEntry("content.xml")),
    ],
    ["application/rtf", utf8("{\\rtf1\\ansi Hello}")],
  ];
  for (const [type, data] of cases) {
    it(`accepts ${type}`, () => {
      expect(detectType({ bytes: data, filename: "whatever.txt", declaredType: "text/plain" })).toBe(type);
    });
  }

  it("knows an e-mail by its extension, its declared type or its header lines", () => {
    const mail = utf8("From: a@example.com\nTo: b@example.com\nSubject: hi\n\nHello");
    expect(detectType({ bytes: mail })).toBe("message/rfc822");
    expect(detectType({ bytes: utf8("hello"), filename: "m.eml" })).toBe("message/rfc822");
    expect(detectType({ bytes: utf8("Note: not a mail\nReally: no\n\ntext") })).toBe("text/plain");
  });
});

describe("detectType: other binary formats are refused by name", () => {
  const cases: Array<[string, Uint8Array, string?]> = [
    ["application/epub+zip", zip(zipEntry("mimetype", "application/epub+zip"))],
    ["application/msword", bytes(0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0), "old.DOC"],
    ["application/x-ole-storage", bytes(0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0)],
    ["image/png", bytes(0x89, "PNG", 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, "IHDR")],
    ["image/jpeg", bytes(0xff, 0xd8, 0xff, 0xe0, 0, 16, "JFIF", 0)],
    ["image/gif", bytes("GIF89a", 1, 0, 1, 0, 0x80, 0, 0)],
    ["image/webp", bytes("RIFF", 0x24, 0, 0, 0, "WEBPVP8 ")],
    ["application/gzip", bytes(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3)],
    ["application/x-executable", bytes(0x7f, "ELF", 2, 1, 1, 0)],
    ["application/vnd.sqlite3", bytes("SQLite format 3", 0, 0x10, 0)],
    ["video/mp4", bytes(0, 0, 0, 0x20, "ftypisom", 0, 0, 2, 0)],
  ];
  for (const [type, data, filename] of cases) {
    it(`refuses ${type}`, () => {
      const error = refusal({ bytes: data, filename });
      expect(error.message).toBe(`unsupported file type ${type}`);
      expect(error.kind).toBe("unsupported");
      expect(error.extras).toEqual({ media_type: type });
    });
  }

  it("says that a ZIP archive is not a valid Office file, naming the one its name claims", () => {
    const archive = zip(zipEntry("notes.txt", "hello"));
    for (const [filename, message] of [
      [
        "notes.zip",
        "a ZIP archive that is not a DOCX, XLSX or PPTX file (no word/, xl/ or ppt/ folder in it); other ZIP archives are not read",
      ],
      ["report.docx", "not a valid DOCX file: a ZIP archive without the word/ folder of one"],
      ["sheet.XLSX", "not a valid XLSX file: a ZIP archive without the xl/ folder of one"],
    ]) {
      const error = refusal({ bytes: archive, filename });
      expect(error.message).toBe(message);
      expect(error.extras).toEqual({ media_type: "application/zip" });
    }
  });

  it("trusts the bytes over the filename and the declared type", () => {
    const error = refusal({
      bytes: bytes(0x89, "PNG", 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, "IHDR"),
      filename: "notes.txt",
      declaredType: "text/plain",
    });
    expect(error.message).toBe("unsupported file type image/png");
  });

  it("refuses binary data of no known type", () => {
    const noise = Uint8Array.from({ length: 512 }, (_, i) => (i * 7919 + 13) % 256);
    expect(refusal({ bytes: noise, filename: "data.txt" }).message).toBe("unrecognised binary content");
  });

  it("refuses UTF-16 without a byte order mark (NUL bytes)", () => {
    const text = Uint8Array.from([..."hello"].flatMap((c) => [c.charCodeAt(0), 0]));
    expect(refusal({ bytes: text }).message).toBe("unrecognised binary content");
  });

  it("does not mistake text for a format with a short printable signature", () => {
    expect(detectType({ bytes: utf8("BMW and Audi are car makers.") })).toBe("text/plain");
    expect(detectType({ bytes: utf8("MZ: a note") })).toBe("text/plain");
    expect(detectType({ bytes: utf8("ID3 tags describe MP3 files.") })).toBe("text/plain");
  });

  it("applies a weak signature when the bytes are not text", () => {
    expect(refusal({ bytes: bytes("BM", 0x36, 0, 0, 0, 0, 0, 0, 0) }).message).toBe("unsupported file type image/bmp");
  });
});

describe("detectType: text formats", () => {
  const text = utf8("Some words.\n");

  it.each([
    ["a.txt", "text/plain"],
    ["a.md", "text/markdown"],
    ["a.markdown", "text/markdown"],
    ["a.html", "text/html"],
    ["a.htm", "text/html"],
    ["a.json", "application/json"],
    ["a.ndjson", "application/x-ndjson"],
    ["a.jsonl", "application/x-ndjson"],
    ["a.csv", "text/csv"],
    ["a.tsv", "text/csv"],
    ["REPORT.Final.MD", "text/markdown"],
    ["../../etc/notes.md", "text/markdown"],
    ["C:\\Users\\me\\table.CSV", "text/csv"],
  ])("by extension: %s is %s", (filename, type) => {
    expect(detectType({ bytes: text, filename })).toBe(type);
  });

  it.each([
    ["text/markdown", "text/markdown"],
    ["text/html; charset=utf-8", "text/html"],
    ["Application/JSON", "application/json"],
    ["application/ld+json", "application/json"],
    ["application/x-ndjson", "application/x-ndjson"],
    ["text/csv", "text/csv"],
    ["text/tab-separated-values", "text/csv"],
    ["application/vnd.ms-excel", "text/csv"],
    ["text/plain", "text/plain"],
    ["application/octet-stream", "text/plain"],
  ])("by declared type: %s is %s", (declaredType, type) => {
    expect(detectType({ bytes: text, declaredType })).toBe(type);
  });

  it("prefers a specific declared type to the extension", () => {
    expect(detectType({ bytes: text, filename: "page.txt", declaredType: "text/html" })).toBe("text/html");
  });

  it("treats a declared text/plain as no information, since multipart parsers default to it", () => {
    expect(detectType({ bytes: text, filename: "notes.md", declaredType: "text/plain" })).toBe("text/markdown");
    expect(detectType({ bytes: utf8('{"a": 1}'), declaredType: "text/plain" })).toBe("application/json");
  });

  it("lets an explicit extension win over sniffing", () => {
    expect(detectType({ bytes: utf8("<!doctype html><p>x</p>"), filename: "snippet.txt" })).toBe("text/plain");
  });

  it.each([
    ["<!DOCTYPE html>\n<html><body>Hi</body></html>", "text/html"],
    ['  \n<html lang="en"><p>Hi</p></html>', "text/html"],
    ['<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"></html>', "text/html"],
    ['{"title": "x", "n": [1, 2]}', "application/json"],
    ['[{"a": 1}, {"a": 2}]', "application/json"],
    ['{"a": 1}\n{"a": 2}\n', "application/x-ndjson"],
    ["42", "text/plain"],
    ["{ not json", "text/plain"],
    ["# A heading\n\nMarkdown without a hint reads fine as plain text.", "text/plain"],
  ])("by content: %j is %s", (content, type) => {
    expect(detectType({ bytes: utf8(content), filename: "upload" })).toBe(type);
  });

  it("reads UTF-8 with a byte order mark, and UTF-16 with one", () => {
    expect(detectType({ bytes: Uint8Array.from([0xef, 0xbb, 0xbf, ...utf8('{"a":1}')]) })).toBe("application/json");
    const le = Uint8Array.from([0xff, 0xfe, ...[..."<html></html>"].flatMap((c) => [c.charCodeAt(0), 0])]);
    const be = Uint8Array.from([0xfe, 0xff, ...[..."plain"].flatMap((c) => [0, c.charCodeAt(0)])]);
    expect(detectType({ bytes: le })).toBe("text/html");
    expect(detectType({ bytes: be, filename: "x.md" })).toBe("text/markdown");
  });

  it("accepts a legacy windows-1252 file", () => {
    const latin = Uint8Array.from([...utf8("name;price\ncaf"), 0xe9, ...utf8(";3\n")]);
    expect(detectType({ bytes: latin, filename: "prices.csv" })).toBe("text/csv");
  });

  it("calls an empty file plain text (extraction then finds nothing)", () => {
    expect(detectType({ bytes: new Uint8Array(0) })).toBe("text/plain");
  });
});

describe("hint parsing", () => {
  it("reads only the extension of a filename", () => {
    expect(extensionOf("a/b.c/file")).toBeUndefined();
    expect(extensionOf("archive.tar.GZ")).toBe("gz");
    expect(extensionOf("trailing.")).toBeUndefined();
    expect(extensionOf(undefined)).toBeUndefined();
  });

  it("strips media type parameters", () => {
    expect(mediaTypeOf(" Text/CSV ; charset=latin1")).toBe("text/csv");
    expect(mediaTypeOf("")).toBeUndefined();
  });
});
