/**
 * CSV and TSV rendered one row per line as `header: value, header: value`, so every row
 * stays self-describing wherever the chunker cuts. Empty cells are left out.
 */
import { parse } from "csv-parse/sync";
import { ExtractionError } from "../errors.ts";

const DELIMITERS = [",", "\t", ";", "|"] as const;

export function renderCsv(text: string): string {
  let rows: string[][];
  try {
    rows = parse(text, {
      delimiter: sniffDelimiter(text),
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      trim: true,
    });
  } catch (error) {
    throw new ExtractionError(`malformed CSV: ${error instanceof Error ? error.message : String(error)}`);
  }
  const [header, ...records] = rows;
  if (header === undefined) return "";
  // A lone row could be a header or data; either way its cells are the text.
  if (records.length === 0)
    return header
      .filter((cell) => cell !== "")
      .map(oneLine)
      .join(", ");
  const names = header.map((name, i) => (name === "" ? `column ${i + 1}` : oneLine(name)));
  const lines: string[] = [];
  for (const record of records) {
    const cells = record.flatMap((value, i) => (value === "" ? [] : [`${names[i] ?? `column ${i + 1}`}: ${oneLine(value)}`]));
    if (cells.length > 0) lines.push(cells.join(", "));
  }
  return lines.join("\n");
}

/** Quoted values may hold line breaks; flattening them keeps one row per line. */
function oneLine(value: string): string {
  return value.replace(/\s*\n\s*/g, " ");
}

/**
 * The delimiter that occurs most often outside quotes in the first line: files named .tsv
 * arrive as text/csv too, and European spreadsheets export with semicolons.
 */
export function sniffDelimiter(text: string): string {
  const counts = new Map<string, number>();
  let quoted = false;
  for (const char of text.slice(0, 64 * 1024)) {
    if (char === '"') quoted = !quoted;
    else if (char === "\n" && !quoted) break;
    else if (!quoted && (DELIMITERS as readonly string[]).includes(char)) counts.set(char, (counts.get(char) ?? 0) + 1);
  }
  let best: string = ",";
  for (const delimiter of DELIMITERS) {
    if ((counts.get(delimiter) ?? 0) > (counts.get(best) ?? 0)) best = delimiter;
  }
  return best;
}
