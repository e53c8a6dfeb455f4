/**
 * Readable text out of a detected file. Whitespace-only results come back as "" and the
 * pipeline decides what that means (it marks the document failed: "no extractable text").
 * Malformed JSON, NDJSON or CSV, or bytes that are not text, throw an ExtractionError naming the problem.
 */
import { ExtractionError } from "../errors.ts";
import { renderCsv } from "./csv.ts";
import { decodeText } from "./decode.ts";
import { htmlToText } from "./html.ts";
import { renderJson, renderNdjson } from "./json.ts";
import type { SupportedType } from "../domain/media-types.ts";

export function extractText(bytes: Uint8Array, type: SupportedType): string {
  const decoded = decodeText(bytes);
  if (decoded === undefined) throw new ExtractionError("unrecognised binary content");
  const text = render(decoded.text, type);
  return text.trim() === "" ? "" : text;
}

function render(text: string, type: SupportedType): string {
  switch (type) {
    case "text/plain":
    case "text/markdown": // Markdown is readable as it is, and its headings guide the chunker.
      return text;
    case "text/html":
      return htmlToText(text);
    case "application/json":
      return renderJson(text);
    case "application/x-ndjson":
      return renderNdjson(text);
    case "text/csv":
      return renderCsv(text);
    default:
      // Documents (PDF, Office, RTF, e-mail) are read by the extractors in extract/, in the sandbox.
      throw new ExtractionError(`not a text format: ${type}`);
  }
}
