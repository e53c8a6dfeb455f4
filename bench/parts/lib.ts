import { readFileSync } from "node:fs";
import path from "node:path";
import { spawn } from "node:child_process";
import autocannon from "autocannon";

export const SCIFACT = path.resolve(import.meta.dirname, "../../../shared/datasets/scifact");

export interface Doc {
  _id: string;
  title: string;
  text: string;
}

export function readJsonl<T>(file: string): T[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

export type Qrels = Map<string, Map<string, number>>;

/** SciFact's corpus, and the queries of one split (test by default) with their judgements. */
export function scifact(split: "test" | "train" = "test") {
  const corpus = readJsonl<Doc>(path.join(SCIFACT, "corpus.jsonl"));
  const queries = new Map(readJsonl<{ _id: string; text: string }>(path.join(SCIFACT, "queries.jsonl")).map((q) => [q._id, q.text]));
  const qrels: Qrels = new Map();
  for (const line of readFileSync(path.join(SCIFACT, `qrels/${split}.tsv`), "utf8")
    .split("\n")
    .slice(1)) {
    const [q, d, s] = line.split("\t");
    if (!q || !d) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q)!.set(d, Number(s));
  }
  const tests = [...qrels.keys()].map((id) => ({ id, text: queries.get(id)! }));
  return { corpus, tests, qrels };
}

/** nDCG@10 and Recall@100 as BEIR computes them (trec_eval's linear gain). */
export function score(runs: Map<string, string[]>, qrels: Qrels) {
  let ndcg = 0;
  let recall = 0;
  for (const [q, rel] of qrels) {
    const ranked = runs.get(q) ?? [];
    let dcg = 0;
    ranked.slice(0, 10).forEach((d, i) => (dcg += (rel.get(d) ?? 0) / Math.log2(i + 2)));
    const ideal = [...rel.values()].sort((a, b) => b - a).slice(0, 10);
    const idcg = ideal.reduce((s, g, i) => s + g / Math.log2(i + 2), 0);
    ndcg += idcg > 0 ? dcg / idcg : 0;
    const relevant = [...rel].filter(([, g]) => g > 0).map(([d]) => d);
    const top = new Set(ranked.slice(0, 100));
    recall += relevant.length ? relevant.filter((d) => top.has(d)).length / relevant.length : 0;
  }
  return { ndcg10: ndcg / qrels.size, recall100: recall / qrels.size };
}

export function startEcho(): Promise<{ url: string; stop(): void }> {
  const proc = spawn(process.execPath, [path.join(import.meta.dirname, "echo-server.ts")], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    proc.stdout.on("data", (c: Buffer) => {
      const m = /echo ready at (\S+)/.exec(c.toString());
      if (m) resolve({ url: m[1]!, stop: () => proc.kill("SIGTERM") });
    });
    proc.once("exit", (code) => reject(new Error(`echo server exited ${code}`)));
  });
}

export async function cannon(opts: autocannon.Options): Promise<autocannon.Result> {
  const result = await autocannon({ connections: 50, ...(opts.amount ? {} : { duration: 10 }), ...opts });
  if (result.errors > 0 || result.non2xx > 0) {
    console.warn(`  (warning: ${result.errors} errors, ${result.non2xx} non-2xx responses)`);
  }
  return result;
}

/** Realistic 1 KB texts: SciFact abstracts cut to 1 KB, each made distinct by its number. */
export function texts1k(corpus: Doc[]): (n: number) => string {
  const bodies = corpus.map((d) => `${d.title} ${d.text}`).filter((t) => t.length >= 1024);
  return (n) => {
    const tag = ` [${n}]`;
    return bodies[n % bodies.length]!.slice(0, 1024 - tag.length) + tag;
  };
}

export const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
