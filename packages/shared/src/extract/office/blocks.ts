/**
 * Builds extracted text from a word processor's paragraphs and tables, as the DOCX, ODT and
 * PPTX scanners meet them. Paragraphs are separated by blank lines; headings become Markdown
 * heading lines so the chunker splits at them and names the heading path; a table row becomes
 * one line, its cells joined by " | ", so a row is never cut in the middle when it fits a chunk.
 *
 * A paragraph inside a paragraph (a text box) joins its outer one; a table inside a table cell
 * joins that cell, its rows separated by "; ".
 */
export interface ParagraphKind {
  /** Markdown heading level, 1 to 6. */
  heading?: number | undefined;
  list?: boolean | undefined;
  /** Leave the paragraph out (e.g. a table of contents entry). */
  drop?: boolean | undefined;
}

interface Table {
  rows: string[];
  cells: string[] | undefined;
}

/** The element names of a table, its rows and its cells in one format. */
export interface TableTags {
  table: string;
  row: string;
  cell: string;
}

/** WordprocessingML's and DrawingML's (DOCX, PPTX), and OpenDocument's. */
export const OOXML_TABLE: TableTags = { table: "tbl", row: "tr", cell: "tc" };
export const ODF_TABLE: TableTags = { table: "table", row: "table-row", cell: "table-cell" };

export class Blocks {
  private readonly out: string[] = [];
  private readonly tables: Table[] = [];
  private depth = 0;
  private text = "";

  /** How many paragraphs are open: 1 in a plain paragraph, more inside a text box. */
  get paragraphDepth(): number {
    return this.depth;
  }

  startParagraph(): void {
    if (this.depth++ === 0) this.text = "";
    else this.text += " ";
  }

  /** Adds text to the open paragraph; text outside any paragraph is dropped. */
  add(text: string): void {
    if (this.depth > 0) this.text += text;
  }

  endParagraph(kind: ParagraphKind = {}): void {
    if (this.depth === 0) return;
    if (--this.depth > 0) {
      this.text += " ";
      return;
    }
    if (kind.drop) return;
    const cells = this.tables.at(-1)?.cells;
    if (cells && cells.length > 0) {
      const text = this.text.replace(/\s+/g, " ").trim();
      if (text) cells[cells.length - 1] = joinWith(cells.at(-1)!, " ", text);
      return;
    }
    const text = (this.text.includes("\n") ? this.text.replace(/[ \t]*\n[ \t]*/g, "\n") : this.text).trim();
    if (!text) return;
    const level = Math.min(Math.max(Math.trunc(kind.heading ?? 0), 0), 6);
    if (level > 0) this.out.push(`${"#".repeat(level)} ${text.replace(/\s+/g, " ")}`);
    else this.out.push(kind.list ? `- ${text}` : text);
  }

  /**
   * Opens a table, row or cell when `name` is the format's element for one (see TABLE_TAGS);
   * false for any other element.
   */
  openTablePart(name: string, tags: TableTags): boolean {
    if (name === tags.table) this.startTable();
    else if (name === tags.row) this.startRow();
    else if (name === tags.cell) this.startCell();
    else return false;
    return true;
  }

  /** Ends a row or a table when `name` is the format's element for one; false for any other element. */
  closeTablePart(name: string, tags: TableTags): boolean {
    if (name === tags.row) this.endRow();
    else if (name === tags.table) this.endTable();
    else return false;
    return true;
  }

  startTable(): void {
    this.tables.push({ rows: [], cells: undefined });
  }

  startRow(): void {
    const table = this.tables.at(-1);
    if (table) table.cells = [];
  }

  startCell(): void {
    this.tables.at(-1)?.cells?.push("");
  }

  endRow(): void {
    const table = this.tables.at(-1);
    if (!table?.cells) return;
    const cells = table.cells;
    while (cells.length > 0 && !cells.at(-1)) cells.pop();
    if (cells.length > 0) table.rows.push(cells.join(" | "));
    table.cells = undefined;
  }

  endTable(): void {
    const table = this.tables.pop();
    if (!table || table.rows.length === 0) return;
    const outer = this.tables.at(-1)?.cells;
    if (outer && outer.length > 0) outer[outer.length - 1] = joinWith(outer.at(-1)!, " ", table.rows.join("; "));
    else this.out.push(table.rows.join("\n"));
  }

  /** The text so far, blocks separated by blank lines. */
  result(): string {
    return this.out.join("\n\n");
  }
}

function joinWith(left: string, separator: string, right: string): string {
  return left ? left + separator + right : right;
}
