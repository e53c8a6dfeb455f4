/**
 * The one ZIP reader. `readZip` reads chosen entries of a ZIP-based file (DOCX, XLSX, PPTX, ODT)
 * within `ExtractionLimits`; `leadingEntries` lists the first entries for type detection.
 *
 * The central directory is read first, as Office itself does: too many entries, or declared
 * sizes over the limit, fail before a byte is inflated. Entries are then inflated in small
 * steps with fflate's streaming `Inflate`, counting as they go, so a file whose headers lie
 * stops as soon as an entry inflates past its declared size or the total passes the limit.
 * Memory stays within the limit plus about one step's output (see STEP_OUTPUT).
 */
import { Inflate } from "fflate";
import type { ExtractionLimits } from "../types.ts";
import { ExtractionError } from "../../errors.ts";

const END = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_END = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const MAX_COMMENT = 0xffff;
// Compressed bytes pushed per step are sized from the ratio seen so far so that a step yields
// about STEP_OUTPUT bytes: the first step assumes DEFLATE's worst case (~1032:1), so a bomb is
// caught after ~1 MiB, while ordinary XML (5-20:1) goes in MAX_STEP pieces.
const STEP_OUTPUT = 1024 * 1024;
const MIN_STEP = 1024;
const MAX_STEP = 64 * 1024;

interface Entry {
  name: string;
  flags: number;
  method: number;
  compressedSize: number;
  size: number;
  offset: number;
}

const names = new TextDecoder("utf-8");

/** The uncompressed contents of the entries `wanted` accepts (first of each name only). */
export function readZip(bytes: Uint8Array, limits: ExtractionLimits, wanted: (name: string) => boolean): Map<string, Uint8Array> {
  const budget = { left: limits.maxUncompressedBytes, limit: limits.maxUncompressedBytes };
  const files = new Map<string, Uint8Array>();
  for (const entry of centralDirectory(bytes, limits, wanted)) {
    if (!files.has(entry.name)) files.set(entry.name, readEntry(bytes, entry, budget));
  }
  return files;
}

function centralDirectory(bytes: Uint8Array, limits: ExtractionLimits, wanted: (name: string) => boolean): Entry[] {
  const end = findEnd(bytes);
  let count = u16(bytes, end + 10);
  let size = u32(bytes, end + 12);
  let offset = u32(bytes, end + 16);
  if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff)
    ({ count, size, offset } = zip64End(bytes, end) ?? { count, size, offset });
  if (count > limits.maxEntries) throw tooMany(`the ZIP file declares ${count}`, limits);
  if (offset + size > end) throw corrupt("the central directory lies outside the file");
  const entries: Entry[] = [];
  let declared = 0;
  let seen = 0;
  for (let at = offset; at < offset + size; ) {
    if (u32(bytes, at) !== CENTRAL) throw corrupt(`bad central directory record at offset ${at}`);
    // Counted as walked: the 16-bit count in the end record can wrap or lie.
    if (++seen > limits.maxEntries) throw tooMany(`the ZIP file has more than ${limits.maxEntries}`, limits);
    const nameLength = u16(bytes, at + 28);
    const extraLength = u16(bytes, at + 30);
    const next = at + 46 + nameLength + extraLength + u16(bytes, at + 32);
    if (next > offset + size) throw corrupt("the central directory is cut short");
    const entry: Entry = {
      name: names.decode(bytes.subarray(at + 46, at + 46 + nameLength)),
      flags: u16(bytes, at + 8),
      method: u16(bytes, at + 10),
      compressedSize: u32(bytes, at + 20),
      size: u32(bytes, at + 24),
      offset: u32(bytes, at + 42),
    };
    applyZip64Extra(entry, bytes.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength));
    declared += entry.size;
    if (declared > limits.maxUncompressedBytes) {
      throw bomb(`entries declare more than ${limits.maxUncompressedBytes} bytes uncompressed`);
    }
    if (wanted(entry.name)) entries.push(entry);
    at = next;
  }
  return entries;
}

function findEnd(bytes: Uint8Array): number {
  const stop = Math.max(0, bytes.length - 22 - MAX_COMMENT);
  for (let at = bytes.length - 22; at >= stop; at--) {
    if (u32(bytes, at) === END) return at;
  }
  throw corrupt("no ZIP end of central directory record");
}

function zip64End(bytes: Uint8Array, end: number): { count: number; size: number; offset: number } | undefined {
  const locator = end - 20;
  if (locator < 0 || u32(bytes, locator) !== ZIP64_LOCATOR) return undefined;
  const at = u64(bytes, locator + 8);
  if (u32(bytes, at) !== ZIP64_END) throw corrupt("bad ZIP64 end of central directory record");
  return { count: u64(bytes, at + 32), size: u64(bytes, at + 40), offset: u64(bytes, at + 48) };
}

// ZIP64 keeps the real values of saturated 32-bit fields, in this order, in extra field 1.
function applyZip64Extra(entry: Entry, extra: Uint8Array): void {
  for (let at = 0; at + 4 <= extra.length; at += 4 + u16(extra, at + 2)) {
    if (u16(extra, at) !== 1) continue;
    let field = at + 4;
    for (const key of ["size", "compressedSize", "offset"] as const) {
      if (entry[key] !== 0xffffffff) continue;
      entry[key] = u64(extra, field);
      field += 8;
    }
    return;
  }
}

/** The local file header at `at`, or null: the entry's name, and where its data starts. */
function localHeader(bytes: Uint8Array, at: number): { name: string; compressedSize: number; dataStart: number } | null {
  if (at + 30 > bytes.length || u32(bytes, at) !== LOCAL) return null;
  const nameLength = u16(bytes, at + 26);
  return {
    name: names.decode(bytes.subarray(at + 30, at + 30 + nameLength)),
    compressedSize: u32(bytes, at + 18),
    dataStart: at + 30 + nameLength + u16(bytes, at + 28),
  };
}

/**
 * The entries whose local headers start in the first `scanBytes`, in file order, with up to
 * `peek` bytes of each one's stored data. It needs no central directory (an upload cut short
 * still names its format) and inflates nothing: enough to tell a DOCX from an ODT.
 */
export function leadingEntries(bytes: Uint8Array, scanBytes: number, peek: number): { name: string; head: Uint8Array }[] {
  const found: { name: string; head: Uint8Array }[] = [];
  const limit = Math.min(bytes.length, scanBytes);
  for (let at = 0; at < limit; at++) {
    const header = localHeader(bytes, at);
    if (!header) continue;
    found.push({ name: header.name, head: bytes.subarray(header.dataStart, header.dataStart + Math.min(header.compressedSize, peek)) });
    at = header.dataStart - 1;
  }
  return found;
}

function readEntry(bytes: Uint8Array, entry: Entry, budget: { left: number; limit: number }): Uint8Array {
  if (entry.flags & 1) throw new ExtractionError(`encrypted file: ${entry.name} is encrypted`);
  const header = localHeader(bytes, entry.offset);
  if (!header) throw corrupt(`no local header for ${entry.name}`);
  const start = header.dataStart;
  const data = bytes.subarray(start, start + entry.compressedSize);
  if (data.length < entry.compressedSize) throw corrupt(`${entry.name} is cut short`);
  if (entry.method === 0) {
    charge(budget, data.length);
    return data;
  }
  if (entry.method !== 8) throw new ExtractionError(`unsupported ZIP compression method ${entry.method} (${entry.name})`);
  const chunks: Uint8Array[] = [];
  let produced = 0;
  const inflater = new Inflate((chunk) => {
    produced += chunk.length;
    if (produced > entry.size) throw bomb(`${entry.name} inflates past its declared ${entry.size} bytes`);
    charge(budget, chunk.length);
    if (chunk.length) chunks.push(chunk);
  });
  try {
    let at = 0;
    do {
      const ratio = at === 0 ? 1032 : Math.max(produced / at, 1);
      const step = Math.min(Math.max(Math.floor(STEP_OUTPUT / ratio), MIN_STEP), MAX_STEP);
      inflater.push(data.subarray(at, at + step), at + step >= data.length);
      at += step;
    } while (at < data.length);
  } catch (error) {
    if (error instanceof ExtractionError) throw error;
    throw corrupt(`${entry.name} does not inflate`, error);
  }
  return concat(chunks, produced);
}

function charge(budget: { left: number; limit: number }, bytes: number): void {
  budget.left -= bytes;
  if (budget.left < 0) throw bomb(`more than ${budget.limit} bytes uncompressed`);
}

function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

const corrupt = (detail: string, cause?: unknown) => new ExtractionError(`corrupt or truncated file: ${detail}`, { cause });
const bomb = (detail: string) => new ExtractionError(`decompression bomb: ${detail}`);
const tooMany = (count: string, limits: ExtractionLimits) => new ExtractionError(`too many entries: ${count} (limit ${limits.maxEntries})`);

function u16(bytes: Uint8Array, at: number): number {
  return (bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8);
}

function u32(bytes: Uint8Array, at: number): number {
  return (u16(bytes, at) | (u16(bytes, at + 2) << 16)) >>> 0;
}

function u64(bytes: Uint8Array, at: number): number {
  return u32(bytes, at) + u32(bytes, at + 4) * 2 ** 32;
}
