/**
 * What an upload is, decided from its bytes first: binary formats are refused by name, and
 * only then do the client's content type and filename choose among the text formats.
 * The filename is a hint only: its extension is read, nothing else (never used as a path).
 */
import { UnsupportedMediaTypeError } from "../errors.ts";
import { decodeText } from "../extract/decode.ts";
import { sniffBinary, type TypeHints } from "./magic.ts";
import { isSupportedType, type SupportedType } from "../domain/media-types.ts";

export interface DetectInput {
  bytes: Uint8Array;
  filename?: string | undefined;
  declaredType?: string | undefined;
}

const BY_EXTENSION: Record<string, SupportedType> = {
  txt: "text/plain",
  md: "text/markdown",
  markdown: "text/markdown",
  html: "text/html",
  htm: "text/html",
  xhtml: "text/html",
  json: "application/json",
  ndjson: "application/x-ndjson",
  jsonl: "application/x-ndjson",
  csv: "text/csv",
  tsv: "text/csv",
  eml: "message/rfc822",
};

const BY_DECLARED_TYPE: Record<string, SupportedType> = {
  "text/markdown": "text/markdown",
  "text/x-markdown": "text/markdown",
  "text/html": "text/html",
  "application/xhtml+xml": "text/html",
  "application/json": "application/json",
  "text/json": "application/json",
  "application/x-ndjson": "application/x-ndjson",
  "application/ndjson": "application/x-ndjson",
  "application/jsonl": "application/x-ndjson",
  "application/x-jsonlines": "application/x-ndjson",
  "application/jsonlines": "application/x-ndjson",
  "text/csv": "text/csv",
  "application/csv": "text/csv",
  "message/rfc822": "message/rfc822",
  "text/x-csv": "text/csv",
  "text/tab-separated-values": "text/csv",
  // Browsers on Windows declare .csv files with Excel's type; a real .xls is binary and was refused.
  "application/vnd.ms-excel": "text/csv",
};

export function detectType(input: DetectInput): SupportedType {
  const hints: TypeHints = {
    extension: extensionOf(input.filename),
    declaredType: mediaTypeOf(input.declaredType),
  };
  const binary = sniffBinary(input.bytes, hints);
  // A format with an extractor (PDF, Office, RTF) is taken by its bytes alone; the extractor
  // then fails the document with a reason if the file is damaged.
  if (binary && isSupportedType(binary.type)) return binary.type;
  if (binary && !binary.weak) throw unsupported(binary.type, hints);
  const decoded = decodeText(input.bytes);
  if (decoded === undefined) {
    if (binary) throw unsupported(binary.type, hints);
    throw new UnsupportedMediaTypeError("unrecognised binary content");
  }
  return textType(decoded.text, hints);
}

/**
 * A specific declared type wins, then the extension, then the content. `text/plain` and
 * `application/octet-stream` say nothing: multipart parsers fill them in when the client
 * gave no type, so they only count when nothing else does.
 */
function textType(text: string, hints: TypeHints): SupportedType {
  const declared = hints.declaredType;
  if (declared !== undefined) {
    const byDeclared = BY_DECLARED_TYPE[declared] ?? (declared.endsWith("+json") ? "application/json" : undefined);
    if (byDeclared) return byDeclared;
  }
  const byExtension = hints.extension === undefined ? undefined : BY_EXTENSION[hints.extension];
  if (byExtension) return byExtension;
  return sniffText(text) ?? "text/plain";
}

const HTML_START = /^\s*(?:<\?xml[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html)[\s>]/i;

/** An e-mail starts with header lines ("Name: value") and has some of these among them. */
const MAIL_HEADERS = /^(?:from|to|subject|date|received|return-path|message-id|mime-version|delivered-to):/im;

function looksLikeEmail(text: string): boolean {
  const head = text.slice(0, 8192).split(/\n\s*\n/, 1)[0] ?? "";
  const lines = head.split("\n").filter((l) => l.trim() !== "");
  if (lines.length < 2 || !lines.every((l) => /^[!-9;-~]+:/.test(l) || /^[ \t]/.test(l))) return false;
  return lines.filter((l) => MAIL_HEADERS.test(l)).length >= 2;
}

function sniffText(text: string): SupportedType | undefined {
  if (HTML_START.test(text.slice(0, 4096))) return "text/html";
  if (looksLikeEmail(text)) return "message/rfc822";
  // Only an object or array counts: a file holding just `42` or `true` is plain text to a reader.
  const first = /\S/.exec(text)?.[0];
  if (first !== "{" && first !== "[") return undefined;
  if (parses(text)) return "application/json";
  if (first === "{" && looksLikeNdjson(text)) return "application/x-ndjson";
  return undefined;
}

function looksLikeNdjson(text: string): boolean {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  return lines.length > 1 && lines.every((line) => parses(line));
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The folder each Office format keeps its parts in (zip-container.ts names the format by it). */
const OFFICE_FOLDERS: Record<string, string> = { docx: "word/", xlsx: "xl/", pptx: "ppt/" };

function unsupported(type: string, hints: TypeHints): UnsupportedMediaTypeError {
  if (type === "application/zip") {
    // A ZIP that is none of the Office formats: most often a damaged or misnamed document.
    const named = hints.extension !== undefined && OFFICE_FOLDERS[hints.extension] ? hints.extension : undefined;
    const message = named
      ? `not a valid ${named.toUpperCase()} file: a ZIP archive without the ${OFFICE_FOLDERS[named]} folder of one`
      : "a ZIP archive that is not a DOCX, XLSX or PPTX file (no word/, xl/ or ppt/ folder in it); other ZIP archives are not read";
    return new UnsupportedMediaTypeError(message, type);
  }
  return new UnsupportedMediaTypeError(`unsupported file type ${type}`, type);
}

/** "Report.Final.DOCX" → "docx"; "C:\\dir\\notes" → undefined. Directories are ignored. */
export function extensionOf(filename: string | undefined): string | undefined {
  if (!filename) return undefined;
  const base = filename.slice(Math.max(filename.lastIndexOf("/"), filename.lastIndexOf("\\")) + 1);
  const dot = base.lastIndexOf(".");
  if (dot < 0 || dot === base.length - 1) return undefined;
  return base.slice(dot + 1).toLowerCase();
}

/** "Text/HTML; charset=UTF-8" → "text/html". */
export function mediaTypeOf(declared: string | undefined): string | undefined {
  const type = declared?.split(";")[0]?.trim().toLowerCase();
  return type ? type : undefined;
}
