/**
 * Instants for the `created` field. Stored values and resolved filter values are both whole
 * seconds in the canonical text form `YYYY-MM-DDThh:mm:ssZ` (years 0000-9999), so comparing the
 * texts (by code point, or SQLite's BINARY order) is comparing the instants. That is why
 * fractional seconds are rejected rather than rounded: they have no canonical text.
 */
import { civilToMs } from "../domain/instant.ts";

const DAY_MS = 86_400_000;
const ABSOLUTE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}):(\d{2})(Z|[+-]\d{2}:\d{2})?)?$/;
const JAVASCRIPT = "javascript:";
const RELATIVE_N = /^javascript:gs\.(daysAgo|daysAgoStart|daysAgoEnd)\((-?\d{1,9})\)$/;
const RELATIVE_TODAY = /^javascript:gs\.(beginningOfToday|endOfToday)\(\)$/;

export type InstantResult = { ok: true; text: string } | { ok: false; reason: string };

export const INSTANT_FORMS = "2024-05-01, 2024-05-01 10:00:00, 2024-05-01T10:00:00Z, 2024-05-01T12:00:00+02:00 or javascript:gs.daysAgo(7)";

/**
 * A filter value for `created`: an absolute date (UTC unless it carries an offset) or one of
 * ServiceNow's relative dates, resolved against `now` in UTC (ServiceNow would use the user's
 * time zone; the service has none). `gs.daysAgo(n)` keeps the time of day of `now`, truncated
 * to the second; the Start/End forms are 00:00:00 and 23:59:59 of that day.
 */
export function parseFilterInstant(text: string, now: Date): InstantResult {
  if (text.startsWith(JAVASCRIPT)) return relative(text, now);
  const m = ABSOLUTE.exec(text);
  if (!m) return { ok: false, reason: `expected a date like ${INSTANT_FORMS}` };
  const fields = [m[1], m[2], m[3], m[4] ?? "0", m[5] ?? "0", m[6] ?? "0"].map(Number);
  const local = civilToMs(fields);
  if (local === undefined) return { ok: false, reason: "not a real date or time" };
  const offset = offsetMinutes(m[7]);
  if (offset === undefined) return { ok: false, reason: "invalid UTC offset" };
  return format(local - offset * 60_000);
}

function relative(text: string, now: Date): InstantResult {
  const nowMs = Math.floor(now.getTime() / 1000) * 1000;
  const today = RELATIVE_TODAY.exec(text);
  if (today) return format(today[1] === "beginningOfToday" ? dayStart(nowMs) : dayStart(nowMs) + DAY_MS - 1000);
  const m = RELATIVE_N.exec(text);
  if (!m) {
    return {
      ok: false,
      reason:
        "unsupported javascript: value; only gs.daysAgo(n), gs.daysAgoStart(n), gs.daysAgoEnd(n), gs.beginningOfToday() and gs.endOfToday() are allowed",
    };
  }
  const then = nowMs - Number(m[2]) * DAY_MS;
  if (m[1] === "daysAgo") return format(then);
  return format(m[1] === "daysAgoStart" ? dayStart(then) : dayStart(then) + DAY_MS - 1000);
}

function dayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

function offsetMinutes(zone: string | undefined): number | undefined {
  if (zone === undefined || zone === "Z") return 0;
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(4, 6));
  if (hours > 23 || minutes > 59) return undefined;
  return (zone.startsWith("-") ? -1 : 1) * (hours * 60 + minutes);
}

function format(ms: number): InstantResult {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return { ok: false, reason: "date out of range (years 0000-9999)" };
  const iso = date.toISOString();
  if (!/^\d{4}-/.test(iso)) return { ok: false, reason: "date out of range (years 0000-9999)" };
  return { ok: true, text: `${iso.slice(0, 19)}Z` };
}
