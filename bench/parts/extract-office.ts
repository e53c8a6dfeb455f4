/**
 * `node bench/parts/extract-office.ts`: extraction throughput of a ~200-page DOCX of prose, beside
 * the HTML extractor's on a ~5 MB page, on the same machine in the same run. Figures only.
 */
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from "docx";
import { extractDocx } from "@docstore/shared/extract/office/docx";
import { DEFAULT_LIMITS } from "@docstore/shared/extract/types";
import { readZip } from "@docstore/shared/extract/office/zip";
import { extractText } from "@docstore/shared/extract/text";

const WORDS = (
  "the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were her " +
  "she there been one all we their has would when if so no will can more other its into only two time could new some these " +
  "may first then do any like my now over such our man me even most made after also did many before must through back years " +
  "where much your way well down should because each just those people how too little state good very make world still own " +
  "see men work long get here between both life being under never day same another know while last might us great old year " +
  "off come since against go came right used take three himself few house use during without again place american around " +
  "however home small found thought went say part once general high upon school every does got united left number course war"
).split(" ");

/** Deterministic pseudo-random numbers, so every run measures the same document. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

function sentence(next: () => number): string {
  const words = Array.from({ length: 8 + Math.floor(next() * 18) }, () => WORDS[Math.floor(next() * WORDS.length)]!);
  const text = words.join(" ");
  return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
}

/** ~500 words a page: a heading every few paragraphs, runs with mixed formatting, some tables. */
async function proseDocx(pages: number): Promise<Uint8Array> {
  const next = random(42);
  const children: (Paragraph | Table)[] = [];
  let words = 0;
  for (let section = 1; words < pages * 500; section++) {
    children.push(
      new Paragraph({
        text: `Section ${section}: ${sentence(next).slice(0, 40)}`,
        heading: section % 4 === 1 ? HeadingLevel.HEADING_1 : HeadingLevel.HEADING_2,
      }),
    );
    for (let i = 0; i < 4; i++) {
      const runs = Array.from({ length: 3 + Math.floor(next() * 4) }, () => {
        const text = `${sentence(next)} `;
        words += text.split(" ").length - 1;
        const r = next();
        return new TextRun({ text, bold: r < 0.15, italics: r > 0.9 });
      });
      children.push(new Paragraph({ children: runs }));
    }
    if (section % 10 === 0) {
      const row = () =>
        new TableRow({
          children: Array.from({ length: 4 }, () => new TableCell({ children: [new Paragraph(sentence(next).slice(0, 24))] })),
        });
      children.push(new Table({ rows: Array.from({ length: 6 }, row) }));
    }
  }
  return new Uint8Array(await Packer.toBuffer(new Document({ sections: [{ children }] })));
}

/** A long article page with the chrome real pages carry: navigation, scripts, a table, lists. */
function htmlPage(bytes: number): Uint8Array {
  const next = random(7);
  const parts = [
    "<!doctype html><html><head><title>Bench</title><style>body{font:14px sans-serif}</style><script>var x = 1;</script></head><body>",
  ];
  parts.push(`<nav><ul>${Array.from({ length: 20 }, (_, i) => `<li><a href="/p${i}">Link ${i}</a></li>`).join("")}</ul></nav><article>`);
  let size = 0;
  for (let section = 1; size < bytes; section++) {
    const block = [`<h2>Section ${section}</h2>`];
    for (let i = 0; i < 4; i++) block.push(`<p>${Array.from({ length: 5 }, () => sentence(next)).join(" <b>bold</b> ")}</p>`);
    if (section % 5 === 0) block.push(`<ul>${Array.from({ length: 5 }, () => `<li>${sentence(next)}</li>`).join("")}</ul>`);
    if (section % 10 === 0)
      block.push(
        `<table>${Array.from({ length: 6 }, () => `<tr>${Array.from({ length: 4 }, () => `<td>${sentence(next).slice(0, 24)}</td>`).join("")}</tr>`).join("")}</table>`,
      );
    const html = block.join("\n");
    size += html.length;
    parts.push(html);
  }
  parts.push("</article><footer>Footer</footer></body></html>");
  return new TextEncoder().encode(parts.join("\n"));
}

/** Median wall time of `runs` calls after one warm-up call. */
function time(run: () => unknown, runs: number): number {
  run();
  const times = Array.from({ length: runs }, () => {
    const started = performance.now();
    run();
    return performance.now() - started;
  });
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

const MB = 1024 * 1024;
const fmt = (n: number, digits = 1) => n.toFixed(digits);

const docx = await proseDocx(200);
const documentXml = readZip(docx, DEFAULT_LIMITS, (name) => name === "word/document.xml").get("word/document.xml")!;
const docxText = extractDocx(docx).text;
const docxMs = time(() => extractDocx(docx), 9);
console.log(
  `extractDocx, 200 pages (${docxText.split(/\s+/).length} words): file ${fmt(docx.length / MB, 2)} MB, ` +
    `document.xml ${fmt(documentXml.length / MB, 2)} MB, text ${fmt(docxText.length / MB, 2)} MB; ` +
    `${fmt(docxMs)} ms median; ${fmt(docx.length / MB / (docxMs / 1000))} MB/s of file, ` +
    `${fmt(documentXml.length / MB / (docxMs / 1000))} MB/s of XML, ${fmt(docxText.length / MB / (docxMs / 1000))} MB/s of text`,
);

const html = htmlPage(5 * MB);
const htmlText = extractText(html, "text/html");
const htmlMs = time(() => extractText(html, "text/html"), 5);
console.log(
  `extractText(text/html): page ${fmt(html.length / MB, 2)} MB, text ${fmt(htmlText.length / MB, 2)} MB; ` +
    `${fmt(htmlMs)} ms median; ${fmt(html.length / MB / (htmlMs / 1000))} MB/s of HTML, ${fmt(htmlText.length / MB / (htmlMs / 1000))} MB/s of text`,
);
