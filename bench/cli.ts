/**
 * `pnpm bench:cli`: the docstore command line beside the service's own ingestion, in one run.
 *  - Texts: TEXTS (20,000) documents of about 1 KB (SciFact sentences, ServiceNow-like
 *    metadata) in a JSONL file, loaded by `docstore load --jsonl`, beside the same documents
 *    sent straight to /load_texts_to_collection from bodies built in memory beforehand (500 a
 *    request, 4 at once: the tool's defaults). Target: the tool reaches 0.9 of that rate.
 *  - Files: FILES (2,000) files in the fixture formats (Markdown, text, HTML, CSV, JSON, RTF,
 *    EML, PDF, DOCX, XLSX, PPTX, ODT), loaded by `docstore load <folder> --concurrency 8`,
 *    beside `curl --parallel --parallel-max 8` uploading the same files. Target: 0.8.
 * Each load runs against a fresh embedded service. Figures: seconds until every document is
 * accepted and until every one is indexed (the tool's own wait included), and the rates.
 * ROUNDS (1) repeats each pair, alternating sides; FILES=0 measures texts only. Prints figures; asserts nothing.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { removeDir, startService, type Service } from "../test/harness.ts";
import { writeMixedFiles } from "../test/mixed-files.ts";
import { fmt, scifact } from "./parts/lib.ts";
import { metadataJson, scaleBatches, sentencesOf } from "./parts/scale-corpus.ts";

const TEXTS = Number(process.env.TEXTS ?? 20_000);
const FILES = Number(process.env.FILES ?? 2_000);
const ROUNDS = Number(process.env.ROUNDS ?? 1);
const CONCURRENCY = 8;
const TOKEN = "bench-cli-token-0123456789abcdef";
const COLLECTION = "bench";
const CLI = path.resolve(import.meta.dirname, "../packages/cli/src/main.ts");
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));

interface Figures {
  accepted: number;
  indexed: number;
}

const work = mkdtempSync(path.join(tmpdir(), "docstore-bench-cli-"));

async function withService<T>(run: (svc: Service) => Promise<T>): Promise<T> {
  const svc = await startService({ env: { API_TOKENS: TOKEN, LOG_LEVEL: "warn" } });
  try {
    return await run(svc);
  } finally {
    await svc.stop();
    removeDir(svc.dataDir);
  }
}

async function counts(svc: Service): Promise<number> {
  const res = await fetch(new URL("/get_list_of_collection", svc.url), { headers: { authorization: `Bearer ${TOKEN}` } });
  const body = (await res.json()) as { collections: { name: string; ready: number; failed: number }[] };
  const c = body.collections.find((x) => x.name === COLLECTION);
  return (c?.ready ?? 0) + (c?.failed ?? 0);
}

/** Seconds from `t0` until `n` documents are ready or failed, polled every 100 ms. */
async function indexedBy(svc: Service, n: number, t0: number): Promise<number> {
  while ((await counts(svc)) < n) await new Promise((r) => setTimeout(r, 100));
  return (performance.now() - t0) / 1000;
}

function run(
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    p.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    p.once("error", reject);
    p.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** `docstore --json load …` against the service; accepted: the tool's sending time plus its start-up. */
async function viaCli(svc: Service, args: string[], n: number): Promise<Figures> {
  const state = mkdtempSync(path.join(work, "state-"));
  const t0 = performance.now();
  const r = await run(process.execPath, [CLI, "--json", "load", "-c", COLLECTION, ...args], {
    DOCSTORE_URL: svc.url,
    DOCSTORE_TOKEN: TOKEN,
    XDG_STATE_HOME: state,
  });
  const wall = (performance.now() - t0) / 1000;
  const summary = JSON.parse(r.stdout.trim().split("\n").at(-1) ?? "{}");
  if (r.code !== 0 || summary.indexed + summary.failed !== n)
    throw new Error(`docstore load: exit ${r.code}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
  return { accepted: summary.send_seconds + (wall - summary.seconds), indexed: wall };
}

async function textsBaseline(svc: Service, bodies: string[]): Promise<Figures> {
  const url = new URL(`/load_texts_to_collection?collection_name=${COLLECTION}`, svc.url);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const res = await fetch(url, {
          method: "POST",
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body,
        });
        if (res.status !== 202) throw new Error(`bulk load: HTTP ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  const accepted = (performance.now() - t0) / 1000;
  return { accepted, indexed: await indexedBy(svc, TEXTS, t0) };
}

async function curlBaseline(svc: Service, files: string[]): Promise<Figures> {
  const url = `${svc.url}/load_document_to_collection?collection_name=${COLLECTION}`;
  const config = path.join(work, "curl.conf");
  writeFileSync(
    config,
    files
      .map(
        (f) =>
          `url = "${url}"\nheader = "Authorization: Bearer ${TOKEN}"\nform = "file=@${f}"\noutput = /dev/null\nwrite-out = "%{http_code}\\n"\n`,
      )
      .join("next\n"),
  );
  const t0 = performance.now();
  const r = await run("curl", ["-s", "--parallel", "--parallel-max", String(CONCURRENCY), "-K", config]);
  const accepted = (performance.now() - t0) / 1000;
  const codes = r.stdout.trim().split("\n");
  if (codes.length !== files.length || codes.some((c) => c !== "202"))
    throw new Error(`curl: ${codes.filter((c) => c !== "202").length} of ${codes.length} answers not 202: ${r.stderr.slice(0, 500)}`);
  return { accepted, indexed: await indexedBy(svc, files.length, t0) };
}

const line = (label: string, n: number, f: Figures) =>
  `  ${label.padEnd(44)} accepted in ${fmt(f.accepted, 2)} s (${fmt(n / f.accepted)}/s), indexed in ${fmt(f.indexed, 2)} s (${fmt(n / f.indexed)} docs/s)`;

function verdict(what: string, base: Figures[], tool: Figures[], target: number) {
  const sum = (fs: Figures[], k: keyof Figures) => fs.reduce((s, f) => s + f[k], 0);
  const indexed = sum(base, "indexed") / sum(tool, "indexed");
  const accepted = sum(base, "accepted") / sum(tool, "accepted");
  console.log(
    `  ${what}: the tool reaches ${fmt(indexed, 2)} of the service's end-to-end rate (target ≥ ${target}: ${indexed >= target ? "met" : "NOT met"}); ${fmt(accepted, 2)} of its acceptance rate`,
  );
}

try {
  console.log(
    `docstore CLI bench: ${fmt(TEXTS)} texts, ${fmt(FILES)} files, ${ROUNDS} round(s); Node ${process.version}; one run, same machine`,
  );
  // Texts: one JSONL file for the tool, the same documents as request bodies for the baseline.
  const sentences = sentencesOf(scifact().corpus);
  const jsonl: string[] = [];
  const bodies: string[] = [];
  let textBytes = 0;
  for (const batch of scaleBatches(sentences, TEXTS, 500)) {
    const documents = batch.map((d) => ({ doc_id: d.id, text: d.text, metadata: metadataJson(d) }));
    for (const d of documents) {
      jsonl.push(JSON.stringify(d));
      textBytes += Buffer.byteLength(d.text);
    }
    bodies.push(JSON.stringify({ documents }));
  }
  const jsonlFile = path.join(work, "texts.jsonl");
  writeFileSync(jsonlFile, jsonl.join("\n") + "\n");
  console.log(`texts: ${fmt(TEXTS)} documents, ${fmt(textBytes / 1e6, 1)} MB of text`);
  const base: Figures[] = [];
  const tool: Figures[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const b = await withService((svc) => textsBaseline(svc, bodies));
    console.log(line(`round ${round}: bulk requests, 500 × 4 at once`, TEXTS, b));
    const t = await withService((svc) => viaCli(svc, ["--jsonl", jsonlFile], TEXTS));
    console.log(line(`round ${round}: docstore load --jsonl`, TEXTS, t));
    base.push(b);
    tool.push(t);
  }
  verdict("texts", base, tool, 0.9);

  if (FILES === 0) process.exit(0);
  const folder = path.join(work, "files");
  const made = await writeMixedFiles(folder, FILES);
  console.log(`files: ${fmt(FILES)} files in 12 formats, ${fmt(made.bytes / 1e6, 1)} MB`);
  const fbase: Figures[] = [];
  const ftool: Figures[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const b = await withService((svc) => curlBaseline(svc, made.files));
    console.log(line(`round ${round}: curl --parallel-max ${CONCURRENCY}`, FILES, b));
    const t = await withService((svc) => viaCli(svc, [folder, "--concurrency", String(CONCURRENCY)], FILES));
    console.log(line(`round ${round}: docstore load <folder> --concurrency ${CONCURRENCY}`, FILES, t));
    fbase.push(b);
    ftool.push(t);
  }
  verdict("files", fbase, ftool, 0.8);
} finally {
  removeDir(work);
}
