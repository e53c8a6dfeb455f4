/**
 * Office files built in memory for tests and benchmarks: DOCX (docx), XLSX (exceljs), PPTX
 * (pptxgenjs), ODT (assembled with fflate) and ZIP bombs dressed as DOCX. Each builder has
 * sample content by default; the `SAMPLE_*_TEXT` constants are what extraction should give.
 */
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow } from "docx";
import ExcelJS from "exceljs";
import pptxgenjs from "pptxgenjs";
import { Deflate, strToU8, zipSync } from "fflate";
import { crc32 } from "node:zlib";

export type DocBlock = { heading: string; level: 1 | 2 | 3; style?: string } | { paragraph: string } | { table: string[][] };

/** `style` names a DOCX paragraph style id: "Title", or one of the custom styles below. */
export const SAMPLE_DOCUMENT: DocBlock[] = [
  { heading: "Annual Report", level: 1, style: "Title" },
  { paragraph: "This report covers the fiscal year." },
  { heading: "Finances", level: 1 },
  { paragraph: "Revenue grew by 12 percent." },
  { heading: "Regional results", level: 2, style: "berschrift2" },
  {
    table: [
      ["Region", "Revenue"],
      ["North", "1200"],
      ["South", "900"],
    ],
  },
  { heading: "Outlook", level: 1, style: "Chapter" },
  { paragraph: "Growth continues next year." },
];

export const SAMPLE_DOCUMENT_TEXT = [
  "# Annual Report",
  "This report covers the fiscal year.",
  "# Finances",
  "Revenue grew by 12 percent.",
  "## Regional results",
  "Region | Revenue\nNorth | 1200\nSouth | 900",
  "# Outlook",
  "Growth continues next year.",
].join("\n\n");

// pptxgenjs's types are read as CommonJS, so they describe the ESM default export as `.default`.
const PptxGenJS = pptxgenjs as unknown as typeof pptxgenjs.default;

const HEADINGS = { 1: HeadingLevel.HEADING_1, 2: HeadingLevel.HEADING_2, 3: HeadingLevel.HEADING_3 } as const;

export async function makeDocx(blocks: DocBlock[] = SAMPLE_DOCUMENT): Promise<Uint8Array> {
  const children = blocks.map((block) => {
    if ("paragraph" in block) return new Paragraph(block.paragraph);
    if ("heading" in block) {
      return block.style
        ? new Paragraph({ text: block.heading, style: block.style })
        : new Paragraph({ text: block.heading, heading: HEADINGS[block.level] });
    }
    const rows = block.table.map(
      (cells) => new TableRow({ children: cells.map((cell) => new TableCell({ children: [new Paragraph(cell)] })) }),
    );
    return new Table({ rows });
  });
  const doc = new Document({
    styles: {
      paragraphStyles: [
        // A German Word's "Heading 2": the id is localised, the name is not.
        { id: "berschrift2", name: "heading 2", basedOn: "Normal", next: "Normal", run: { bold: true } },
        { id: "Chapter", name: "Chapter", basedOn: "Heading1", next: "Normal" },
      ],
    },
    sections: [{ children }],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}

export type Cell = string | number | boolean | Date | null;

export const SAMPLE_SHEETS: { name: string; rows: Cell[][] }[] = [
  {
    name: "People",
    rows: [
      ["Name", "Age", "Born", "Member"],
      ["Ada", 36, new Date(Date.UTC(1988, 11, 10)), true],
      ["Grace", 45, new Date(Date.UTC(1979, 11, 9)), false],
    ],
  },
  { name: "Sales", rows: [[null], ["Quarter", "Amount", "Note"], ["Q1", 1200.5, null], ["Q2", 0.1 + 0.2, "estimate"]] },
];

export const SAMPLE_SHEET_TEXTS = [
  "Name | Age | Born | Member\nName: Ada | Age: 36 | Born: 1988-12-10 | Member: TRUE\nName: Grace | Age: 45 | Born: 1979-12-09 | Member: FALSE",
  "Quarter | Amount | Note\nQuarter: Q1 | Amount: 1200.5\nQuarter: Q2 | Amount: 0.3 | Note: estimate",
];

export async function makeXlsx(sheets = SAMPLE_SHEETS): Promise<Uint8Array> {
  const workbook = new ExcelJS.Workbook();
  for (const sheet of sheets) workbook.addWorksheet(sheet.name).addRows(sheet.rows);
  return new Uint8Array(await workbook.xlsx.writeBuffer());
}

export interface SlideSpec {
  title: string;
  bullets?: string[];
  table?: string[][];
  notes?: string;
}

export const SAMPLE_SLIDES: SlideSpec[] = [
  { title: "Quarterly review", bullets: ["Revenue is up", "Costs are down"], notes: "Mention the new office." },
  {
    title: "Numbers",
    table: [
      ["Region", "Revenue"],
      ["North", "1200"],
    ],
  },
  { title: "Next steps", bullets: ["Hire two engineers"] },
];

export const SAMPLE_SLIDE_TEXTS = [
  "# Quarterly review\n\nRevenue is up\n\nCosts are down\n\nMention the new office.",
  "# Numbers\n\nRegion | Revenue\nNorth | 1200",
  "# Next steps\n\nHire two engineers",
];

export async function makePptx(slides = SAMPLE_SLIDES): Promise<Uint8Array> {
  const pptx = new PptxGenJS();
  const title = { name: "title", type: "title" as const, x: 0.5, y: 0.3, w: 9, h: 1 };
  pptx.defineSlideMaster({ title: "TITLED", objects: [{ placeholder: { options: title, text: "" } }] });
  for (const spec of slides) {
    const slide = pptx.addSlide({ masterName: "TITLED" });
    slide.addText(spec.title, { placeholder: "title" });
    if (spec.bullets)
      slide.addText(
        spec.bullets.map((text) => ({ text, options: { bullet: true, breakLine: true } })),
        { x: 0.5, y: 1.5, w: 9, h: 2 },
      );
    if (spec.table)
      slide.addTable(
        spec.table.map((row) => row.map((text) => ({ text }))),
        { x: 0.5, y: 3.5, w: 9 },
      );
    if (spec.notes) slide.addNotes(spec.notes);
  }
  return new Uint8Array((await pptx.write({ outputType: "nodebuffer" })) as Buffer);
}

const ODT_NS = [
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"',
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"',
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"',
].join(" ");

const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** An ODT as LibreOffice lays it out: an uncompressed mimetype first, a manifest, content.xml. */
export function makeOdt(blocks: DocBlock[] = SAMPLE_DOCUMENT): Uint8Array {
  const body = blocks.map((block) => {
    if ("paragraph" in block) return `<text:p text:style-name="Standard">${escapeXml(block.paragraph)}</text:p>`;
    if ("heading" in block) return `<text:h text:outline-level="${block.level}">${escapeXml(block.heading)}</text:h>`;
    const rows = block.table.map(
      (cells) =>
        `<table:table-row>${cells.map((c) => `<table:table-cell office:value-type="string"><text:p>${escapeXml(c)}</text:p></table:table-cell>`).join("")}</table:table-row>`,
    );
    return `<table:table table:name="T"><table:table-column table:number-columns-repeated="${block.table[0]?.length ?? 1}"/>${rows.join("")}</table:table>`;
  });
  const content = `<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content ${ODT_NS} office:version="1.3"><office:automatic-styles/><office:body><office:text>${body.join("\n")}</office:text></office:body></office:document-content>`;
  const manifest = `<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>`;
  return zipSync({
    mimetype: [strToU8("application/vnd.oasis.opendocument.text"), { level: 0 }],
    "META-INF/manifest.xml": strToU8(manifest),
    "content.xml": strToU8(content),
  });
}

export interface ZipBombOptions {
  /** "deflate": word/document.xml inflates to `bytes` spaces; "entries": `entries` tiny files. */
  kind: "deflate" | "entries";
  /** Uncompressed size, in whole MiB; 2 GiB by default. */
  bytes?: number;
  /** The size the headers declare for word/document.xml; the true size by default. */
  declaredSize?: number;
  entries?: number;
}

/** A ZIP bomb dressed as a DOCX: about 2 MB for 2 GiB of spaces, or 100,000 entries. */
export function makeZipBomb({ kind, bytes = 2 ** 31, declaredSize = bytes, entries = 100_000 }: ZipBombOptions): Uint8Array {
  const files = [
    stored(
      "[Content_Types].xml",
      strToU8('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'),
    ),
  ];
  if (kind === "deflate") {
    files.push({ name: "word/document.xml", method: 8, data: deflatedSpaces(bytes), size: declaredSize, crc: 0 });
  } else {
    for (let i = 0; i < entries; i++) files.push(stored(`word/media/${i}.txt`, strToU8("x")));
  }
  return writeZip(files);
}

/**
 * Raw DEFLATE of `length` spaces without deflating them all: one MiB is compressed and
 * sync-flushed to a byte boundary, and its compressed form, which only refers back to earlier
 * spaces, is repeated.
 */
function deflatedSpaces(length: number): Uint8Array {
  const out: Uint8Array[] = [];
  const deflate = new Deflate({ level: 9 }, (chunk) => out.push(chunk));
  const mib = new Uint8Array(1 << 20).fill(0x20);
  const next = (chunk: Uint8Array, final: boolean) => {
    deflate.push(chunk, final);
    if (!final) deflate.flush(true);
    return Buffer.concat(out.splice(0));
  };
  const first = next(mib, false);
  const repeated = next(mib, false);
  const last = next(new Uint8Array(0), true);
  const copies = Math.max(0, Math.ceil(length / mib.length) - 1);
  return Buffer.concat([first, ...Array<Uint8Array>(copies).fill(repeated), last]);
}

interface ZipEntry {
  name: string;
  method: 0 | 8;
  data: Uint8Array;
  size: number;
  crc: number;
}

/** Little-endian fields, each a value and its width in bytes. */
function le(...fields: [number, 2 | 4][]): Buffer {
  const out = Buffer.alloc(fields.reduce((sum, [, width]) => sum + width, 0));
  let at = 0;
  for (const [value, width] of fields) at = width === 2 ? out.writeUInt16LE(value, at) : out.writeUInt32LE(value, at);
  return out;
}

const stored = (name: string, data: Uint8Array): ZipEntry => ({ name, method: 0, data, size: data.length, crc: crc32(data) });

// A plain ZIP writer, since fflate's would not let the headers lie. Without ZIP64 the 16-bit
// entry count saturates, as some writers leave it.
function writeZip(entries: ZipEntry[]): Uint8Array {
  const locals: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = strToU8(entry.name);
    // Version 2.0, UTF-8 names, dated 1980-01-01.
    const local = le(
      [0x04034b50, 4],
      [20, 2],
      [0x0800, 2],
      [entry.method, 2],
      [0, 2],
      [33, 2],
      [entry.crc >>> 0, 4],
      [entry.data.length, 4],
      [entry.size, 4],
      [name.length, 2],
      [0, 2],
    );
    // The central record repeats the local fields from "version needed" on, then says where.
    const header = Buffer.concat([le([0x02014b50, 4], [20, 2]), local.subarray(4), le([0, 2], [0, 2], [0, 2], [0, 4], [offset, 4])]);
    locals.push(local, name, entry.data);
    central.push(header, name);
    offset += local.length + name.length + entry.data.length;
  }
  const size = central.reduce((sum, part) => sum + part.length, 0);
  const count = Math.min(entries.length, 0xffff);
  const end = le([0x06054b50, 4], [0, 2], [0, 2], [count, 2], [count, 2], [size, 4], [offset, 4], [0, 2]);
  return new Uint8Array(Buffer.concat([...locals, ...central, end]));
}
