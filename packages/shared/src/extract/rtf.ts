/**
 * RTF to text with a small converter of our own: one pass over the bytes, a stack of group
 * states, no recursion, so malformed input ends (truncated groups, stray braces, unknown
 * words are all tolerated) instead of hanging. Only text that a reader sees is kept:
 * destinations such as the font table, pictures, headers and footers are skipped.
 * Paragraphs with an outline level (Word writes one for heading styles) become `#` lines.
 */
import iconv from "iconv-lite";
import { joinSections, type Extracted } from "./types.ts";
import { ExtractionError } from "../errors.ts";

interface GroupState {
  skip: boolean; // inside a destination whose text is not content
  fontTable: boolean; // inside the font table, where `\f` and `\fcharset` describe fonts
  uc: number; // how many fallback characters follow a `\uN`
  codePage: number; // of `\'hh` escapes and 8-bit bytes: the document's, or the current font's
}

const MAX_DEPTH = 1000; // real documents nest a few dozen groups deep

// Destinations whose content is never part of the text (`{\*\...}` ones are skipped as well).
const SKIPPED = new Set([
  "fonttbl",
  "colortbl",
  "stylesheet",
  "info",
  "pict",
  "object",
  "objdata",
  "datastore",
  "themedata",
  "colorschememapping",
  "latentstyles",
  "listtable",
  "listoverridetable",
  "rsidtbl",
  "revtbl",
  "filetbl",
  "xmlnstbl",
  "generator",
  "template",
  "userprops",
  "fldinst",
  "nonshppict",
  "footnote",
  "header",
  "headerl",
  "headerr",
  "headerf",
  "footer",
  "footerl",
  "footerr",
  "footerf",
  "xe",
  "tc",
]);

const SYMBOLS: Record<string, string> = {
  tab: "\t",
  line: "\n",
  cell: " | ",
  nestcell: " | ",
  row: "\n",
  nestrow: "\n",
  emdash: "\u2014",
  endash: "\u2013",
  bullet: "\u2022",
  lquote: "\u2018",
  rquote: "\u2019",
  ldblquote: "\u201c",
  rdblquote: "\u201d",
  emspace: " ",
  enspace: " ",
  qmspace: " ",
};

const OLD_CHARSETS = { mac: 10000, pc: 437, pca: 850 };
// \fcharset values to Windows code pages; 0 (ANSI), 1 (default) and 2 (symbol) mean the document's.
const CHARSET_CODE_PAGES: Record<number, number> = {
  77: 10000,
  128: 932,
  129: 949,
  134: 936,
  136: 950,
  161: 1253,
  162: 1254,
  163: 1258,
  177: 1255,
  178: 1256,
  186: 1257,
  204: 1251,
  222: 874,
  238: 1250,
};

export function extractRtf(bytes: Uint8Array): Extracted {
  if (!/^\{\\rtf/.test(String.fromCharCode(...bytes.subarray(0, 5)))) throw new ExtractionError("not an RTF file");
  return joinSections([{ text: new RtfConverter(bytes).run(), at: {} }]);
}

class RtfConverter {
  private readonly bytes: Uint8Array;
  private state: GroupState = { skip: false, fontTable: false, uc: 1, codePage: 1252 };
  private readonly stack: GroupState[] = [];
  private readonly out: string[] = [];
  private pending: number[] = []; // bytes waiting to be decoded together (double-byte code pages)
  private skipChars = 0; // fallback characters of a \uN still to skip
  private ansiCodePage = 1252;
  private defaultFont = 0;
  private font = 0; // the font the font table is describing
  private readonly fontCodePages = new Map<number, number>();
  private outline: number | undefined; // the current paragraph's outline level
  private paragraphStart = 0; // index in `out`

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  run(): string {
    const { bytes } = this;
    let i = 0;
    while (i < bytes.length) {
      const c = bytes[i]!;
      if (c === 0x7b /* { */) {
        this.flush();
        if (this.stack.length >= MAX_DEPTH) throw new ExtractionError("corrupt RTF: groups nested too deeply");
        this.stack.push(this.state);
        this.state = { ...this.state };
        this.skipChars = 0;
        i++;
      } else if (c === 0x7d /* } */) {
        this.flush();
        const outer = this.stack.pop();
        if (!outer || this.stack.length === 0) break; // the document's own group has ended
        this.state = outer;
        this.skipChars = 0;
        i++;
      } else if (c === 0x5c /* \ */) {
        i = this.control(i);
      } else {
        if (c >= 0x20 || c === 0x09) this.byte(c); // raw line breaks are not text in RTF
        i++;
      }
    }
    this.flush();
    this.endParagraph();
    const text = this.out.join("").toWellFormed(); // an unpaired \uN surrogate becomes U+FFFD
    return text
      .replace(/ \| (?=\n|$)/g, "")
      .replace(/[ \t]+\n/g, "\n")
      .replace(/\n{3,}/g, "\n\n");
  }

  /** Reads the control word or symbol at `i` (a backslash) and returns where the next token starts. */
  private control(i: number): number {
    const { bytes } = this;
    const next = bytes[i + 1];
    if (next === undefined) return i + 1;
    if (next === 0x27 /* ' */) {
      const hex = String.fromCharCode(bytes[i + 2] ?? 0, bytes[i + 3] ?? 0);
      if (/^[0-9a-f]{2}$/i.test(hex)) this.byte(Number.parseInt(hex, 16));
      return i + 4;
    }
    if (!isLetter(next)) {
      this.symbol(String.fromCharCode(next));
      return i + 2;
    }
    let j = i + 1;
    while (j < bytes.length && isLetter(bytes[j]!)) j++;
    const word = String.fromCharCode(...bytes.subarray(i + 1, Math.min(j, i + 33)));
    const digitsFrom = bytes[j] === 0x2d /* - */ && isDigit(bytes[j + 1]) ? j + 1 : j;
    let k = digitsFrom;
    while (k < bytes.length && isDigit(bytes[k])) k++;
    let param: number | undefined;
    if (k > digitsFrom) {
      const value = Math.min(Number(String.fromCharCode(...bytes.subarray(digitsFrom, Math.min(k, digitsFrom + 10)))), 2 ** 31);
      param = digitsFrom > j ? -value : value;
    }
    if (bytes[k] === 0x20) k++; // the space ending a control word belongs to it
    this.flush();
    if (word === "bin") return k + Math.max(0, param ?? 0); // raw binary data follows
    this.word(word, param);
    return k;
  }

  private word(word: string, param: number | undefined): void {
    const state = this.state;
    if (word === "fonttbl") state.fontTable = true;
    if (SKIPPED.has(word)) state.skip = true;
    if (state.fontTable) {
      if (word === "f") this.font = param ?? 0;
      const codePage = word === "cpg" ? param : word === "fcharset" ? CHARSET_CODE_PAGES[param ?? 0] : undefined;
      if (codePage !== undefined) this.fontCodePages.set(this.font, codePage);
      return;
    }
    const symbol = SYMBOLS[word];
    if (symbol !== undefined) this.emit(symbol);
    else if (word === "u" && param !== undefined) {
      this.emit(String.fromCharCode(param & 0xffff)); // negative N is the signed 16-bit form
      this.skipChars = state.uc;
    } else if (word === "uc") state.uc = Math.min(Math.max(param ?? 1, 0), 16);
    else if (word === "ansicpg" && param !== undefined) state.codePage = this.ansiCodePage = param;
    else if (word === "mac" || word === "pc" || word === "pca") state.codePage = this.ansiCodePage = OLD_CHARSETS[word];
    else if (word === "deff") this.defaultFont = param ?? 0;
    else if (word === "f" || word === "plain") {
      state.codePage = this.fontCodePages.get(word === "f" ? (param ?? 0) : this.defaultFont) ?? this.ansiCodePage;
    } else if (state.skip) return;
    else if (word === "par" || word === "sect" || word === "page") this.endParagraph();
    else if (word === "pard") this.outline = undefined;
    else if (word === "outlinelevel" && param !== undefined && param >= 0 && param < 9) this.outline = param;
  }

  private symbol(symbol: string): void {
    this.flush();
    if (symbol === "\\" || symbol === "{" || symbol === "}") this.byte(symbol.charCodeAt(0));
    else if (symbol === "~") this.char(" ");
    else if (symbol === "_") this.char("-");
    else if (symbol === "*") this.state.skip = true;
    else if ((symbol === "\n" || symbol === "\r") && !this.state.skip) this.endParagraph();
    // \- (optional hyphen), \| and \: (index marks) show nothing
  }

  /** One byte of text in the current code page, unless it is the fallback of a \uN. */
  private byte(b: number): void {
    if (this.skipChars > 0) this.skipChars--;
    else if (!this.state.skip) this.pending.push(b);
  }

  private char(text: string): void {
    if (this.skipChars > 0) this.skipChars--;
    else this.emit(text);
  }

  private emit(text: string): void {
    this.flush();
    if (!this.state.skip) this.out.push(text);
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    this.out.push(decode(this.pending, this.state.codePage));
    this.pending = [];
  }

  private endParagraph(): void {
    if (this.outline !== undefined) {
      const heading = this.out.splice(this.paragraphStart).join("").replace(/\s+/g, " ").trim();
      if (heading) this.out.push(`${"#".repeat(this.outline + 1)} ${heading}`);
    }
    this.out.push("\n");
    this.paragraphStart = this.out.length;
  }
}

function decode(bytes: number[], codePage: number): string {
  const name = codePage === 65001 ? "utf-8" : String(codePage);
  return iconv.decode(Uint8Array.from(bytes), iconv.encodingExists(name) ? name : "windows-1252");
}

function isLetter(b: number): boolean {
  return (b >= 0x61 && b <= 0x7a) || (b >= 0x41 && b <= 0x5a);
}

function isDigit(b: number | undefined): boolean {
  return b !== undefined && b >= 0x30 && b <= 0x39;
}
