/**
 * Which extractor reads which type. This module runs inside the sandbox's worker threads
 * (sandbox-worker.ts imports it by URL), so each extractor added here is isolated and timed.
 * Its contract: an `Extracted`, or an ExtractionError when the document itself is at fault;
 * any other error is a bug.
 */
import { AppError } from "../errors.ts";
import { extractText } from "../ingest/extract.ts";
import { isSupportedType, type SupportedType } from "../ingest/types.ts";
import { extractEml } from "./eml.ts";
import { extractRtf } from "./rtf.ts";
import { extractPdf } from "./pdf.ts";
import { extractDocx } from "./docx.ts";
import { extractXlsx } from "./xlsx.ts";
import { extractPptx } from "./pptx.ts";
import { extractOdt } from "./odt.ts";
import { ExtractionError, joinSections, type Extracted, type ExtractionLimits } from "./types.ts";

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

/** The text formats of ingest/, as one section. */
function fromText(bytes: Uint8Array, type: SupportedType): Extracted {
  try {
    return joinSections([{ text: extractText(bytes, type), at: {} }]);
  } catch (error) {
    // Malformed JSON or CSV, or binary bytes: the document is at fault, not the service.
    if (error instanceof AppError && error.status < 500) throw new ExtractionError(error.message, { cause: error });
    throw error;
  }
}
