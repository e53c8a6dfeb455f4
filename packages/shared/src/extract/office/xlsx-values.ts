/**
 * Cell numbers as a reader sees them: numbers in a date or time format as ISO dates and times,
 * other numbers to Excel's 15 significant digits (0.30000000000000004 → 0.3). Other number
 * formats (currency, percent, thousands separators) are not applied: the value is what counts.
 */
import { attr, scanXml } from "./xml.ts";

export type DateKind = "date" | "time" | "datetime";

// Built-in number formats that show dates or times (ECMA-376 part 1, 18.8.30).
const BUILT_IN: Record<number, DateKind> = {
  14: "date",
  15: "date",
  16: "date",
  17: "date",
  18: "time",
  19: "time",
  20: "time",
  21: "time",
  22: "datetime",
  45: "time",
  46: "time",
  47: "time",
};

/** Which cell styles (indices into cellXfs) show dates or times, read from xl/styles.xml. */
export function dateStyles(xml: string): Map<number, DateKind> {
  const formats = new Map<number, string>();
  const styles = new Map<number, DateKind>();
  let inCellXfs = false;
  let index = 0;
  scanXml(xml, {
    open(name, attrs) {
      if (name === "numFmt") formats.set(Number(attr(attrs, "numFmtId")), attr(attrs, "formatCode") ?? "");
      else if (name === "cellXfs") [inCellXfs, index] = [true, 0];
      else if (name === "xf" && inCellXfs) {
        const id = Number(attr(attrs, "numFmtId") ?? 0);
        const custom = formats.get(id);
        const kind = custom === undefined ? BUILT_IN[id] : formatKind(custom);
        if (kind) styles.set(index, kind);
        index++;
      }
    },
    close(name) {
      if (name === "cellXfs") inCellXfs = false;
    },
  });
  return styles;
}

/** Whether a custom format code shows a date, a time or both. */
export function formatKind(code: string): DateKind | undefined {
  const first = code.split(";")[0] ?? "";
  // Elapsed time ([h]:mm) is a duration, not a clock time; it stays a number of days.
  if (/\[(h+|m+|s+)\]/i.test(first)) return undefined;
  // Quoted text, [colour] and [$locale] brackets, escapes and padding say nothing.
  const bare = first.replace(/"[^"]*"|\[[^\]]*\]|\\.|[_*]./g, "");
  const date = /[dy]/i.test(bare);
  const time = /[hs]/i.test(bare);
  if (date && time) return "datetime";
  if (date) return "date";
  if (time) return "time";
  return /m/i.test(bare) ? "date" : undefined;
}

export function formatNumber(value: string, kind: DateKind | undefined, date1904: boolean): string {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) return value;
  const date = kind && serialToIso(n, kind, date1904);
  return date || String(Number(n.toPrecision(15)));
}

const DAY_MS = 86_400_000;
// Day 0 of Excel's 1900 date system is 1899-12-30 once past its phantom 1900-02-29 (day 60).
const UNIX_EPOCH_1900 = 25_569;
const DAYS_1904_TO_1900 = 1_462;

function serialToIso(serial: number, kind: DateKind, date1904: boolean): string | undefined {
  let days = serial + (date1904 ? DAYS_1904_TO_1900 : 0);
  if (!date1904 && serial >= 1 && serial < 61) days += 1;
  const ms = Math.round((days - UNIX_EPOCH_1900) * 86_400) * 1000;
  const date = new Date(ms);
  if (!Number.isFinite(date.getTime()) || Math.abs(ms) > 250_000 * 365 * DAY_MS) return undefined;
  const iso = date.toISOString();
  if (kind === "date") return iso.slice(0, 10);
  if (kind === "time") return serial < 1 ? iso.slice(11, 19) : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}
