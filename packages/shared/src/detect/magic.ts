/**
 * Binary formats recognised by their leading bytes ("magic numbers"). They are refused for now
 * (those with an extractor are accepted by detect.ts), and a refusal names what the file is.
 *
 * A "weak" signature is short or printable enough to begin an ordinary text file ("BM", "MZ",
 * "ID3"); it only counts when the bytes are not text.
 */
import { zipContainerType } from "./zip-container.ts";

export interface TypeHints {
  /** Lower-case extension without the dot, e.g. "doc". */
  extension?: string | undefined;
  /** Lower-case media type without parameters. */
  declaredType?: string | undefined;
}

export interface BinaryMatch {
  type: string;
  weak: boolean;
}

interface Signature {
  test(bytes: Uint8Array): boolean;
  type: string | ((bytes: Uint8Array, hints: TypeHints) => string);
  weak?: boolean;
}

const at = (offset: number, ...parts: Array<number | string>) => {
  const expected = parts.flatMap((p) => (typeof p === "number" ? [p] : [...p].map((c) => c.charCodeAt(0))));
  return (bytes: Uint8Array) => expected.every((b, i) => bytes[offset + i] === b);
};
const starts = (...parts: Array<number | string>) => at(0, ...parts);
const anyOf =
  (...tests: Array<(bytes: Uint8Array) => boolean>) =>
  (bytes: Uint8Array) =>
    tests.some((t) => t(bytes));
const RIFF = "application/x-riff";

const SIGNATURES: readonly Signature[] = [
  { test: starts("%PDF-"), type: "application/pdf" },
  { test: anyOf(starts("PK", 3, 4), starts("PK", 5, 6), starts("PK", 7, 8)), type: zipContainerType },
  { test: starts(0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1), type: (_, hints) => oleType(hints) },
  { test: starts("{\\rtf"), type: "application/rtf" },
  { test: starts("%!PS"), type: "application/postscript" },
  { test: starts(0x89, "PNG", 0x0d, 0x0a, 0x1a, 0x0a), type: "image/png" },
  { test: starts(0xff, 0xd8, 0xff), type: "image/jpeg" },
  { test: anyOf(starts("GIF87a"), starts("GIF89a")), type: "image/gif" },
  { test: anyOf(starts("II*", 0), starts("MM", 0, "*")), type: "image/tiff" },
  { test: (b) => riffType(b) !== RIFF, type: riffType },
  { test: at(4, "ftyp"), type: isoMediaType, weak: true },
  { test: starts(0x1a, 0x45, 0xdf, 0xa3), type: "video/webm" },
  { test: starts("OggS", 0), type: "application/ogg" },
  { test: starts("fLaC"), type: "audio/flac" },
  { test: anyOf(starts("wOFF"), starts("wOF2")), type: "font/woff" },
  { test: starts(0x1f, 0x8b), type: "application/gzip" },
  { test: starts(0xfd, "7zXZ", 0), type: "application/x-xz" },
  { test: starts(0x28, 0xb5, 0x2f, 0xfd), type: "application/zstd" },
  { test: starts("7z", 0xbc, 0xaf, 0x27, 0x1c), type: "application/x-7z-compressed" },
  { test: starts("Rar!", 0x1a, 0x07), type: "application/vnd.rar" },
  { test: at(257, "ustar"), type: "application/x-tar", weak: true },
  { test: starts("SQLite format 3", 0), type: "application/vnd.sqlite3" },
  { test: starts(0x7f, "ELF"), type: "application/x-executable" },
  { test: starts(0, "asm"), type: "application/wasm" },
  { test: anyOf(starts(0xcf, 0xfa, 0xed, 0xfe), starts(0xfe, 0xed, 0xfa, 0xcf)), type: "application/x-mach-binary" },
  { test: starts("RIFF"), type: RIFF, weak: true },
  { test: starts("BM"), type: "image/bmp", weak: true },
  { test: starts(0, 0, 1, 0), type: "image/x-icon", weak: true },
  { test: starts("MZ"), type: "application/vnd.microsoft.portable-executable", weak: true },
  { test: starts("ID3"), type: "audio/mpeg", weak: true },
  { test: (b) => b[0] === 0xff && ((b[1] ?? 0) & 0xe0) === 0xe0, type: "audio/mpeg", weak: true },
  { test: starts("BZh"), type: "application/x-bzip2", weak: true },
  { test: starts("PAR1"), type: "application/vnd.apache.parquet", weak: true },
];

/** The binary format `bytes` start with, if any signature matches. */
export function sniffBinary(bytes: Uint8Array, hints: TypeHints): BinaryMatch | undefined {
  for (const signature of SIGNATURES) {
    if (!signature.test(bytes)) continue;
    const type = typeof signature.type === "string" ? signature.type : signature.type(bytes, hints);
    return { type, weak: signature.weak === true };
  }
  return undefined;
}

// OLE2 compound files hold old Word, Excel, PowerPoint and Outlook files alike; only the
// client's hints tell them apart without parsing the directory.
const OLE_TYPES: Record<string, string> = {
  doc: "application/msword",
  dot: "application/msword",
  xls: "application/vnd.ms-excel",
  ppt: "application/vnd.ms-powerpoint",
  msg: "application/vnd.ms-outlook",
};

function oleType(hints: TypeHints): string {
  const byExtension = hints.extension === undefined ? undefined : OLE_TYPES[hints.extension];
  if (byExtension) return byExtension;
  if (hints.declaredType && Object.values(OLE_TYPES).includes(hints.declaredType)) return hints.declaredType;
  return "application/x-ole-storage";
}

function riffType(bytes: Uint8Array): string {
  if (!starts("RIFF")(bytes)) return RIFF;
  if (at(8, "WEBP")(bytes)) return "image/webp";
  if (at(8, "WAVE")(bytes)) return "audio/wav";
  if (at(8, "AVI ")(bytes)) return "video/x-msvideo";
  return RIFF;
}

function isoMediaType(bytes: Uint8Array): string {
  const brand = String.fromCharCode(...bytes.subarray(8, 12));
  if (["heic", "heix", "mif1", "msf1"].includes(brand)) return "image/heic";
  if (brand === "avif") return "image/avif";
  if (brand === "qt  ") return "video/quicktime";
  if (brand === "M4A ") return "audio/mp4";
  return "video/mp4";
}
