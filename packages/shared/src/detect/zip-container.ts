/**
 * Names the format inside a ZIP container (DOCX, XLSX, PPTX, ODF, EPUB) so that a refused
 * upload says what it is, from the first entries' names (read by the one ZIP reader); nothing
 * is inflated.
 */
import { leadingEntries } from "../extract/office/zip.ts";

const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
const PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation";

// Office writers put the parts that identify the format within the first few entries.
const SCAN_BYTES = 256 * 1024;

export function zipContainerType(bytes: Uint8Array): string {
  for (const { name, head } of leadingEntries(bytes, SCAN_BYTES, 100)) {
    if (name === "mimetype") {
      // ODF and EPUB store their media type uncompressed as the first entry.
      const declared = String.fromCharCode(...head);
      if (/^application\/[\w.+-]+$/.test(declared)) return declared;
    }
    if (name.startsWith("word/")) return DOCX;
    if (name.startsWith("xl/")) return XLSX;
    if (name.startsWith("ppt/")) return PPTX;
  }
  return "application/zip";
}
