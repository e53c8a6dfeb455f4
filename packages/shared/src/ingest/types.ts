/** The text formats ingestion can extract today; everything else is refused with a 415. */
export const SUPPORTED_TYPES = [
  "text/plain",
  "text/markdown",
  "text/html",
  "application/json",
  "application/x-ndjson",
  "text/csv",
] as const;

export type SupportedType = (typeof SUPPORTED_TYPES)[number];

export function isSupportedType(value: string): value is SupportedType {
  return (SUPPORTED_TYPES as readonly string[]).includes(value);
}
