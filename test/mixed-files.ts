/**
 * A folder of files in the formats the service reads (the test fixtures' formats): Markdown,
 * plain text, HTML, CSV, JSON, RTF, EML, PDF, DOCX, XLSX, PPTX and ODT, each file different.
 * Used by the command-line tests and by bench/cli.ts.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { makeDocx, makeOdt, makePdf, makePptx, makeXlsx } from "@docstore/shared/testing";

const WORDS = "replica outage billing cluster restart latency database index search runbook incident change network".split(" ");

/** A sentence that differs for every n. */
export function sentence(n: number): string {
  const pick = (k: number) => WORDS[(n * 7 + k * 3) % WORDS.length];
  return `Note ${n}: the ${pick(1)} ${pick(2)} needs a ${pick(3)} check before the ${pick(4)} review.`;
}

type Maker = (n: number) => Uint8Array | Promise<Uint8Array>;
const utf8 = (s: string) => new TextEncoder().encode(s);

export const FORMATS: Record<string, Maker> = {
  md: (n) => utf8(`# Document ${n}\n\n${sentence(n)}\n\n## Details\n\n${sentence(n + 1)}\n`),
  txt: (n) => utf8(`${sentence(n)}\n${sentence(n + 2)}\n`),
  html: (n) =>
    utf8(`<!doctype html><html><head><title>Doc ${n}</title></head><body><h1>Document ${n}</h1><p>${sentence(n)}</p></body></html>`),
  csv: (n) => utf8(`id,summary\n${n},"${sentence(n)}"\n${n + 1},"${sentence(n + 1)}"\n`),
  json: (n) => utf8(JSON.stringify({ id: n, summary: sentence(n), tags: ["a", "b"] })),
  rtf: (n) => utf8(`{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Times;}}\\f0 ${sentence(n)}\\par}`),
  eml: (n) =>
    utf8(
      `From: ops@example.com\r\nTo: team@example.com\r\nSubject: Note ${n}\r\nDate: Mon, 1 Jan 2024 10:00:00 +0000\r\nContent-Type: text/plain\r\n\r\n${sentence(n)}\r\n`,
    ),
  pdf: (n) => makePdf([[`Document ${n}`, sentence(n)]]),
  docx: (n) => makeDocx([{ heading: `Document ${n}`, level: 1 }, { paragraph: sentence(n) }]),
  xlsx: (n) =>
    makeXlsx([
      {
        name: "Sheet1",
        rows: [
          ["id", "summary"],
          [n, sentence(n)],
        ],
      },
    ]),
  pptx: (n) => makePptx([{ title: `Slide ${n}`, bullets: [sentence(n)] }]),
  odt: (n) => makeOdt([{ heading: `Document ${n}`, level: 1 }, { paragraph: sentence(n) }]),
};

/** Writes `count` files, the formats in turn, `per` files a subfolder; returns their paths and total bytes. */
export async function writeMixedFiles(dir: string, count: number, per = 100): Promise<{ files: string[]; bytes: number }> {
  const formats = Object.entries(FORMATS);
  const files: string[] = [];
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const [ext, make] = formats[i % formats.length]!;
    const sub = path.join(dir, `part-${String(Math.floor(i / per)).padStart(3, "0")}`);
    if (i % per === 0) mkdirSync(sub, { recursive: true });
    const data = await make(i);
    const file = path.join(sub, `doc-${String(i).padStart(5, "0")}.${ext}`);
    writeFileSync(file, data);
    files.push(file);
    bytes += data.byteLength;
  }
  return { files, bytes };
}
