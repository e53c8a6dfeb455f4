/**
 * PDF extraction throughput beside poppler's pdftotext on the same generated file in the same
 * run, and the peak memory of a process that only extracts it. Prints figures; asserts nothing.
 *
 * `node bench/parts/extract-pdf.ts` prints them; `pdfFigures()` is the same for `bench/run.ts`.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { extractPdf } from "@docstore/shared/extract/pdf";
import { makePdf } from "@docstore/shared/testing";
import { fmt, readJsonl, SCIFACT, type Doc } from "./lib.ts";

const PAGES = 200;
const WORDS_PER_PAGE = 2_000;
const RUNS = 3;

/** Realistic prose: SciFact abstracts, each a title line and a paragraph, ~2,000 words a page. */
function prosePages(): string[][] {
  const corpus = readJsonl<Doc>(path.join(SCIFACT, "corpus.jsonl"));
  const pages: string[][] = [];
  let next = 0;
  for (let p = 0; p < PAGES; p++) {
    const lines: string[] = [];
    let words = 0;
    while (words < WORDS_PER_PAGE) {
      const doc = corpus[next++ % corpus.length]!;
      const budget = Math.ceil((WORDS_PER_PAGE - words) * 1.1);
      const body = doc.text.split(/\s+/).slice(0, Math.max(20, budget)).join(" ");
      lines.push(doc.title, body, "");
      words += doc.title.split(/\s+/).length + body.split(/\s+/).length;
    }
    pages.push(lines);
  }
  return pages;
}

function run(command: string, args: string[]): Promise<{ stdout: string; code: number | null }> {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  const chunks: Buffer[] = [];
  child.stdout.on("data", (c: Buffer) => chunks.push(c));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ stdout: Buffer.concat(chunks).toString("utf8"), code }));
  });
}

/**
 * Seconds per run of each, after one warm-up run each that is not counted. The runs alternate,
 * so a change in the machine's load during the measurement weighs on both alike.
 */
async function timedSideBySide(a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[number, number]> {
  await a();
  await b();
  const seconds: [number, number] = [0, 0];
  for (let i = 0; i < RUNS; i++) {
    let started = performance.now();
    await a();
    seconds[0] += (performance.now() - started) / 1000;
    started = performance.now();
    await b();
    seconds[1] += (performance.now() - started) / 1000;
  }
  return [seconds[0] / RUNS, seconds[1] / RUNS];
}

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** Whether poppler's pdftotext can be spawned here. */
function hasPdftotext(): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const child = spawn("pdftotext", ["-v"], { stdio: "ignore" });
    child.once("error", (err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? resolve(false) : reject(err)));
    child.once("close", () => resolve(true));
  });
}

export async function pdfFigures(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-pdf-"));
  try {
    const bytes = await makePdf(prosePages());
    const file = path.join(dir, "in.pdf");
    writeFileSync(file, bytes);
    const mb = bytes.byteLength / 1e6;
    console.log(
      `PDF extraction: a generated ${PAGES}-page PDF of SciFact prose (~${fmt(WORDS_PER_PAGE)} words a page), ${fmt(mb, 2)} MB, ${RUNS} runs each, alternating, after a warm-up`,
    );

    let ours = "";
    let reference = "";
    const withReference = await hasPdftotext();
    const [oursSeconds, referenceSeconds] = await timedSideBySide(
      async () => (ours = (await extractPdf(bytes)).text),
      async () => {
        if (!withReference) return;
        const out = await run("pdftotext", ["-enc", "UTF-8", file, "-"]);
        if (out.code !== 0) throw new Error(`pdftotext exited ${out.code}`);
        reference = out.stdout;
      },
    );
    const oursRate = mb / oursSeconds;
    console.log(
      `  extractPdf (pdf.js, in process): ${fmt(oursRate, 2)} MB/s (${fmt(oursSeconds * 1000)} ms a run, ${fmt(words(ours))} words)`,
    );
    if (withReference) {
      const referenceRate = mb / referenceSeconds;
      console.log(
        `  pdftotext (poppler, spawned):    ${fmt(referenceRate, 2)} MB/s (${fmt(referenceSeconds * 1000)} ms a run, ${fmt(words(reference))} words)`,
      );
      console.log(`  ratio ${fmt(oursRate / referenceRate, 2)} (target >= 0.2)`);
    } else {
      console.log("  pdftotext (poppler) is not on PATH (Debian's poppler-utils): no ratio, skipped");
    }

    const peak = async (flags: string[]) => {
      const child = await run(process.execPath, [...flags, "--input-type=module", "--eval", CHILD, file]);
      const figures = JSON.parse(child.stdout.trim().split("\n").pop() || "{}") as { peakKb?: number; baseKb?: number };
      if (figures.peakKb === undefined) throw new Error(`the extracting child printed no figures (exit ${child.code})`);
      return `${fmt(figures.peakKb / 1024)} MB (${fmt((figures.baseKb ?? 0) / 1024)} MB before extracting)`;
    };
    console.log(`  peak RSS of a process extracting it: ${await peak([])} (target < 300 MB)`);
    // V8 sizes the young generation from the host's memory (up to 2 x 64 MB); a worker can cap it.
    console.log(`  the same with --max-semi-space-size=16: ${await peak(["--max-semi-space-size=16"])}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// A process that only extracts the file, as a worker would, then reports its resident set
// high-water mark in kB: VmHWM from /proc, or getrusage's maxrss where there is no /proc.
const CHILD = `
import { readFileSync } from "node:fs";
import { extractPdf } from ${JSON.stringify(import.meta.resolve("@docstore/shared/extract/pdf"))};
const peakKb = () => {
  try { return Number(/^VmHWM:\\s+(\\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"))[1]); }
  catch { return process.resourceUsage().maxRSS; }
};
const bytes = new Uint8Array(readFileSync(process.argv[1]));
const baseKb = peakKb();
await extractPdf(bytes);
console.log(JSON.stringify({ peakKb: peakKb(), baseKb }));
`;

if (process.argv[1] === fileURLToPath(import.meta.url)) await pdfFigures();
