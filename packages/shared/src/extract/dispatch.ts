/**
 * Which extractor reads which type. This module runs inside the sandbox's worker threads
 * (sandbox-worker.ts imports it by URL), so each extractor added here is isolated and timed.
 * Its contract: an `Extracted`, or an ExtractionError when the document itself is at fault;
 * any other error is a bug.
 */
import { ExtractionError } from "../errors.ts";
import { extractText } from "./text.ts";
import { isSupportedType, type SupportedType } from "../domain/media-types.ts";
import { extractEml } from "./eml.ts";
import { extractRtf } from "./rtf.ts";
import { extractPdf } from "./pdf.ts";
import { extractDocx } from "./office/docx.ts";
import { extractXlsx } from "./office/xlsx.ts";
import { extractPptx } from "./office/pptx.ts";
import { extractOdt } from "./office/odt.ts";
import { joinSections, type Extracted, type ExtractionLimits } from "./types.ts";

type Extractor = (bytes: Uint8Array, limits: ExtractionLimits, type: SupportedType) => Extracted | Promise<Extracted>;

/** The text formats (text.ts), as one section. */
const fromText: Extractor = (bytes, _limits, type) => joinSections([{ text: extractText(bytes, type), at: {} }]);

/** One extractor per supported type: a type added to SUPPORTED_TYPES without one does not compile. */
const EXTRACTORS: Record<SupportedType, Extractor> = {
  "text/plain": fromText,
  "text/markdown": fromText,
  "text/html": fromText,
  "application/json": fromText,
  "application/x-ndjson": fromText,
  "text/csv": fromText,
  "application/pdf": (bytes) => extractPdf(bytes),
  "application/rtf": extractRtf,
  "message/rfc822": extractEml,
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": extractDocx,
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": extractXlsx,
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": extractPptx,
  "application/vnd.oasis.opendocument.text": extractOdt,
};

/** `limits` bound what ZIP-based formats (DOCX, XLSX, PPTX, ODT) may unpack. */
export async function extract(bytes: Uint8Array, type: string, limits: ExtractionLimits): Promise<Extracted> {
  if (!isSupportedType(type)) throw new ExtractionError(`no extractor for ${type}`);
  return EXTRACTORS[type](bytes, limits, type);
}
