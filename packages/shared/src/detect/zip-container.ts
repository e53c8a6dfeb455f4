/**
 * Names the format inside a ZIP container (DOCX, XLSX, PPTX, ODF, EPUB) so that a refused
 * upload says what it is. Reads only local file headers near the start; nothing is inflated.
 */

const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
const PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation";

// Office writers put the parts that identify the format within the first few entries.
const SCAN_BYTES = 256 * 1024;
const HEADER_LENGTH = 30;

export function zipContainerType(bytes: Uint8Array): string {
  const limit = Math.min(bytes.length, SCAN_BYTES) - HEADER_LENGTH;
  for (let i = 0; i <= limit; i++) {
    if (bytes[i] !== 0x50 || bytes[i + 1] !== 0x4b || bytes[i + 2] !== 0x03 || bytes[i + 3] !== 0x04) continue;
    const compressedSize = u32(bytes, i + 18);
    const nameLength = u16(bytes, i + 26);
    const extraLength = u16(bytes, i + 28);
    const nameStart = i + HEADER_LENGTH;
    const name = latin1(bytes.subarray(nameStart, nameStart + nameLength));
    if (name === "mimetype") {
      // ODF and EPUB store their media type uncompressed as the first entry.
      const dataStart = nameStart + nameLength + extraLength;
      const declared = latin1(bytes.subarray(dataStart, dataStart + Math.min(compressedSize, 100)));
      if (/^application\/[\w.+-]+$/.test(declared)) return declared;
    }
    if (name.startsWith("word/")) return DOCX;
    if (name.startsWith("xl/")) return XLSX;
    if (name.startsWith("ppt/")) return PPTX;
    i = nameStart + nameLength - 1;
  }
  return "application/zip";
}

function u16(bytes: Uint8Array, at: number): number {
  return (bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8);
}

function u32(bytes: Uint8Array, at: number): number {
  return (u16(bytes, at) | (u16(bytes, at + 2) << 16)) >>> 0;
}

function latin1(bytes: Uint8Array): string {
  return String.fromCharCode(...bytes);
}
