/**
 * The stored form of an instant (`created`): whole seconds, `YYYY-MM-DDThh:mm:ssZ`, years
 * 0000-9999. Metadata validation and the filter language's dates (filter/dates.ts) share it.
 */

const CANONICAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;

/** True for a real date-time in the exact stored form `YYYY-MM-DDThh:mm:ssZ`. */
export function isCanonicalInstant(text: string): boolean {
  const m = CANONICAL.exec(text);
  return m !== null && civilToMs(m.slice(1, 7).map(Number)) !== undefined;
}

/** Milliseconds since the epoch of a UTC civil date-time, or undefined if there is no such moment. */
export function civilToMs([y, mo, d, h, mi, s]: number[]): number | undefined {
  if (y === undefined || mo === undefined || d === undefined) return undefined;
  if (h === undefined || mi === undefined || s === undefined) return undefined;
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) return undefined;
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not.
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, 0);
  return t.getTime();
}

function daysInMonth(y: number, mo: number): number {
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1] ?? 0;
}
