/** The formats ingestion can extract; everything else is refused with a 415 naming its type. */
export const SUPPORTED_TYPES = [
  "text/plain",
  "text/markdown",
  "text/html",
  "application/json",
  "application/x-ndjson",
  "text/csv",
  "application/pdf",
  "application/rtf",
  "message/rfc822",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  "application/vnd.oasis.opendocument.text",
] as const;

export type SupportedType = (typeof SUPPORTED_TYPES)[number];

export function isSupportedType(value: string): value is SupportedType {
  return (SUPPORTED_TYPES as readonly string[]).includes(value);
}
