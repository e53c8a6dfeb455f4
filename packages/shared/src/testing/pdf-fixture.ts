/**
 * PDFs made on the fly for tests and the benchmark, with pdf-lib: real text layers (Helvetica,
 * WinAnsi characters only), so an extractor reads them as it would a word processor's export.
 */
import { PDFDocument, StandardFonts, rgb, type PDFFont } from "pdf-lib";
import { deflateSync, crc32 } from "node:zlib";

// US Letter with 0.75 in margins.
const PAGE: [number, number] = [612, 792];
const MARGIN = 54;
const WIDTH = PAGE[0] - 2 * MARGIN;
const HEIGHT = PAGE[1] - 2 * MARGIN;
const LEADING = 1.2;
// The font shrinks until a page's lines fit, as a dense two-column paper's would.
const MAX_SIZE = 11;
const MIN_SIZE = 4;

/**
 * One PDF page per entry of `pages`, each a list of lines; a line longer than the page is
 * wrapped at spaces, and an empty line leaves a blank line (a paragraph break). The font size
 * is the largest (11 pt down to 4 pt) at which the page's wrapped lines fit.
 */
export async function makePdf(pages: string[][]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const measure = widthAtOnePoint(font);
  pages.forEach((lines, i) => {
    const { size, wrapped } = fit(lines, measure, i + 1);
    const page = doc.addPage(PAGE);
    if (wrapped.length === 0) return;
    page.drawText(wrapped.join("\n"), { x: MARGIN, y: PAGE[1] - MARGIN - size, size, font, lineHeight: size * LEADING });
  });
  return doc.save();
}

/** A one-page PDF as a scanner makes it: a picture (and a drawn frame) but no text layer. */
export async function makeScannedPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage(PAGE);
  const image = await doc.embedPng(grayPng(64, 64));
  page.drawImage(image, { x: MARGIN, y: MARGIN, width: WIDTH, height: HEIGHT });
  page.drawRectangle({ x: MARGIN, y: MARGIN, width: WIDTH, height: HEIGHT, borderColor: rgb(0, 0, 0), borderWidth: 1 });
  return doc.save();
}

function widthAtOnePoint(font: PDFFont): (word: string) => number {
  const cache = new Map<string, number>();
  return (word) => {
    let width = cache.get(word);
    if (width === undefined) {
      width = font.widthOfTextAtSize(word, 1);
      cache.set(word, width);
    }
    return width;
  };
}

function fit(lines: string[], measure: (word: string) => number, pageNumber: number) {
  for (let size = MAX_SIZE; size >= MIN_SIZE; size -= 0.5) {
    const wrapped = lines.flatMap((line) => wrap(line, WIDTH / size, measure));
    if (wrapped.length * size * LEADING <= HEIGHT) return { size, wrapped };
  }
  throw new RangeError(`page ${pageNumber} holds too much text to fit at ${MIN_SIZE} pt`);
}

/** Greedy wrapping; widths are in units of the font size. A word wider than a line stays whole. */
function wrap(line: string, maxWidth: number, measure: (word: string) => number): string[] {
  const words = line.split(" ").filter((w) => w !== "");
  if (words.length === 0) return [""];
  const space = measure(" ");
  const out: string[] = [];
  let current = "";
  let width = 0;
  for (const word of words) {
    const w = measure(word);
    if (current && width + space + w > maxWidth) {
      out.push(current);
      current = "";
      width = 0;
    }
    width += (current ? space : 0) + w;
    current = current ? `${current} ${word}` : word;
  }
  out.push(current);
  return out;
}

/** A mid-gray 8-bit grayscale PNG with a little noise, as a scanned page would be. */
function grayPng(width: number, height: number): Uint8Array {
  const rows = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) rows[y * (width + 1) + 1 + x] = 128 + ((x * 7 + y * 13) % 32);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8); // 8 bits, grayscale, deflate, no filter method, no interlace
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", header), chunk("IDAT", deflateSync(rows)), chunk("IEND", Buffer.alloc(0))]);
}
