/**
 * How long chunking takes, printed, never asserted (speed is judged by benchmarks, not by
 * timed tests). The target: ~1,500 documents of 1 KB per second on one core, alongside
 * everything else the service does, so chunking should take a small share of that second.
 *
 *   node packages/shared/src/ingest/bench-chunk.ts
 */
import { globSync, readFileSync } from "node:fs";
import { clearMergeCache } from "gpt-tokenizer/encoding/cl100k_base";
import { chunkText, DEFAULT_CHUNK_OVERLAP_TOKENS, DEFAULT_CHUNK_TOKENS, type ChunkOptions } from "./chunk.ts";

const WORDS = (
  "the of and to in is that for it as was with be by on not he this are or his from at which but have an they you " +
  "were her she there been one all we their has would when if so no will more can who what out up said about other " +
  "incident priority assignment group resolution workaround server database network latency timeout certificate " +
  "configuration deployment rollback customer ticket escalation monitoring alert threshold capacity storage backup " +
  "authentication authorization password token expired renewed restarted investigated identified confirmed"
).split(" ");

/** Deterministic pseudo-random prose: sentences of 8-25 words, paragraphs of 2-6 sentences. */
export function makeDocs(count: number, bytes: number, seed = 42): string[] {
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
  const pick = () => WORDS[Math.floor(random() * WORDS.length)]!;
  const docs: string[] = [];
  for (let d = 0; d < count; d++) {
    let text = "";
    while (text.length < bytes) {
      const sentences = 2 + Math.floor(random() * 5);
      for (let s = 0; s < sentences; s++) {
        const words = Array.from({ length: 8 + Math.floor(random() * 18) }, pick);
        words[0] = words[0]!.charAt(0).toUpperCase() + words[0]!.slice(1);
        text += `${words.join(" ")}${random() < 0.1 ? "?" : "."} `;
      }
      text = `${text.trimEnd()}\n\n`;
    }
    docs.push(text.slice(0, bytes));
  }
  return docs;
}

/** Real, varied text (prose, code, tables): the READMEs of installed packages, cut into documents of `bytes` characters. */
function readmeDocs(count: number, bytes: number): string[] {
  const files = globSync("node_modules/.pnpm/*/node_modules/**/README.md", { cwd: process.cwd() }).slice(0, 200);
  const corpus = files.map((file) => readFileSync(file, "utf8")).join("\n\n");
  if (corpus.length < bytes) return [];
  return Array.from({ length: count }, (_, i) => {
    const at = (i * bytes) % (corpus.length - bytes);
    return corpus.slice(at, at + bytes);
  });
}

/** Prints the time of a pass with the tokenizer's merge cache cleared, then of a second, warm pass. */
function time(label: string, docs: string[], opts: ChunkOptions): void {
  if (docs.length === 0) return;
  for (const doc of docs.slice(0, 50)) chunkText(doc, opts); // let the JIT compile the hot paths
  clearMergeCache(); // the tokenizer caches the BPE merges of pieces it has seen
  for (const pass of ["cold", "warm"]) {
    const started = performance.now();
    let chunks = 0;
    for (const doc of docs) chunks += chunkText(doc, opts).length;
    const ms = performance.now() - started;
    const perSecond = Math.round((docs.length / ms) * 1000);
    console.log(`${label}, ${pass}: ${docs.length} docs -> ${chunks} chunks in ${ms.toFixed(1)} ms (${perSecond} docs/s)`);
  }
}

if (import.meta.main) {
  const defaults = { chunkTokens: DEFAULT_CHUNK_TOKENS, overlapTokens: DEFAULT_CHUNK_OVERLAP_TOKENS };
  time("1 KB synthetic prose, 512/64", makeDocs(1500, 1024), defaults);
  time("1 KB of package READMEs, 512/64", readmeDocs(1500, 1024), defaults);
  time("1 KB synthetic prose, 128/16 (several chunks each)", makeDocs(1500, 1024, 7), { chunkTokens: 128, overlapTokens: 16 });
  time("10 KB synthetic prose, 512/64", makeDocs(300, 10 * 1024, 9), defaults);
  time("100 KB of package READMEs, 512/64", readmeDocs(20, 100 * 1024), defaults);
}
