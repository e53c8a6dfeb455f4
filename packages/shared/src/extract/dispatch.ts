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

/** `limits` bound what ZIP-based formats (DOCX, XLSX, PPTX, ODT) may unpack. */
export async function extract(bytes: Uint8Array, type: string, limits: ExtractionLimits): Promise<Extracted> {
  switch (type) {
    case "application/rtf":
      return extractRtf(bytes);
    case "message/rfc822":
      return extractEml(bytes);
    case "application/pdf":
      return extractPdf(bytes);
    case "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
      return extractDocx(bytes, limits);
    case "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":
      return extractXlsx(bytes, limits);
    case "application/vnd.openxmlformats-officedocument.presentationml.presentation":
      return extractPptx(bytes, limits);
    case "application/vnd.oasis.opendocument.text":
      return extractOdt(bytes, limits);
    default:
      if (isSupportedType(type)) return fromText(bytes, type);
      throw new ExtractionError(`no extractor for ${type}`);
  }
}

/** The text formats (text.ts), as one section. */
function fromText(bytes: Uint8Array, type: SupportedType): Extracted {
  return joinSections([{ text: extractText(bytes, type), at: {} }]);
}
