/**
 * PDFs made on the fly for tests and the benchmark, with pdf-lib: real text layers in
 * Helvetica, so an extractor reads them as it would a word processor's export. Helvetica's
 * encoding (WinAnsi) has no Greek, CJK or emoji: characters it cannot encode are drawn as "?".
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
 * wrapped at spaces (one holding "\n" is several lines), and an empty line leaves a blank line
 * (a paragraph break). The font size is the largest (11 pt down to 4 pt) at which the page's
 * wrapped lines fit; a page that does not fit at 4 pt is a RangeError.
 */
export async function makePdf(pages: string[][]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const measure = widthAtOnePoint(font);
  const encodable = new Set(font.getCharacterSet());
  const clean = (line: string) => [...line.replace(/\t/g, " ")].map((c) => (encodable.has(c.codePointAt(0)!) ? c : "?")).join("");
  pages.forEach((lines, i) => {
    const { size, wrapped } = fitPage(lines.flatMap((line) => line.split(/\r\n|\r|\n/)).map(clean), measure, i + 1);
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

/**
 * A one-page PDF showing `text` in a Japanese font that is not embedded, its codes mapped by a
 * predefined CMap (UniJIS-UCS2-H: the codes are UCS-2), as older Japanese office software
 * writes them. A reader needs its CMap files to get Unicode back. Written by hand: pdf-lib
 * only embeds fonts. `text` must lie in the Basic Multilingual Plane.
 */
export function makeCjkPdf(text: string): Uint8Array {
  const hex = [...text].map((c) => c.charCodeAt(0).toString(16).padStart(4, "0")).join("");
  const content = `BT /F1 12 Tf 36 720 Td <${hex}> Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    "<< /Type /Font /Subtype /Type0 /BaseFont /HeiseiMin-W3 /Encoding /UniJIS-UCS2-H /DescendantFonts [6 0 R] >>",
    "<< /Type /Font /Subtype /CIDFontType0 /BaseFont /HeiseiMin-W3 /CIDSystemInfo << /Registry (Adobe) /Ordering (Japan1) /Supplement 2 >> /FontDescriptor 7 0 R >>",
    "<< /Type /FontDescriptor /FontName /HeiseiMin-W3 /Flags 4 /FontBBox [0 -200 1000 900] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 700 /StemV 80 >>",
  ];
  let pdf = "%PDF-1.4\n";
  const offsets = objects.map((body, i) => {
    const at = pdf.length;
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
    return at;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  pdf += offsets.map((at) => `${String(at).padStart(10, "0")} 00000 n \n`).join("");
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(pdf); // all ASCII, so offsets in characters are offsets in bytes
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

function fitPage(lines: string[], measure: (word: string) => number, pageNumber: number) {
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
