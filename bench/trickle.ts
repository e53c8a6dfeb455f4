/**
 * `pnpm bench:trickle`: the embedded index (LanceSearchIndex, as the embedded worker thread runs
 * it) under a trickle of writes. A table of N documents of about 1 KB is loaded and maintained;
 * then every EVERY_MS a write of BATCH new documents, for SECONDS, while one client searches (a
 * SciFact test query, k=10) every 200 ms. Twice on the same table, each time from a maintained
 * table: with restFactor 0 (a maintenance run after every pause in the writes) and with the
 * default rest. Prints for each the maintenance runs, the process's CPU seconds and the bytes it
 * wrote (/proc/self/io), the search latency, and the rows left outside the full-text index at the
 * end. Asserts nothing.
 *   N=200000  BATCH=10  EVERY_MS=3000  SECONDS=60
 */
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { connect } from "@lancedb/lancedb";
import { parseFilter } from "@docstore/shared/filter/parse";
import { createLogger } from "@docstore/shared/logger";
import { LanceSearchIndex } from "@docstore/shared/index/lancedb";
import { TEXT_INDEX } from "@docstore/shared/index/lancedb-table";
import { fmt, scifact } from "./parts/lib.ts";
import { metadataJson, scaleBatches, sentencesOf, type ScaleDoc } from "./parts/scale-corpus.ts";

const positive = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}: a positive integer, not ${process.env[name]}`);
  return value;
};
const n = positive("N", 200_000);
const batch = positive("BATCH", 10);
const everyMs = positive("EVERY_MS", 3_000);
const seconds = positive("SECONDS", 60);
const writes = Math.ceil((seconds * 1000) / everyMs);

const { corpus, tests } = scifact();
const queries = tests.map((t) => t.text);
const all = parseFilter("");
const item = (d: ScaleDoc) => ({
  doc: { collection: "c", docId: d.id, version: 1, metadata: metadataJson(d), text: d.text },
  chunks: [{ index: 0, text: d.text, start: 0, end: d.text.length }],
});
const dir = mkdtempSync(path.join(tmpdir(), "bench-trickle-"));
const keepVersionsMs = 10_000;

/** Bytes this process caused to be written to storage (at the moment pages are dirtied). */
function writtenBytes(): number {
  const io = readFileSync("/proc/self/io", "utf8");
  return Number(/^write_bytes: (\d+)$/m.exec(io)?.[1] ?? Number.NaN);
}

async function unindexedRows(): Promise<number> {
  const db = await connect(dir);
  const table = await db.openTable("chunks");
  try {
    return (await table.indexStats(TEXT_INDEX))?.numUnindexedRows ?? 0;
  } finally {
    table.close();
    db.close();
  }
}

interface Figures {
  runs: number;
  cpuSeconds: number;
  writtenMB: number;
  p50: number;
  p99: number;
  searches: number;
  unindexed: number;
}

async function trickle(docs: ScaleDoc[], restFactor: number | undefined): Promise<Figures> {
  let runs = 0;
  // Each run ends with this line; warnings and errors are shown.
  const logger = createLogger(
    "info",
    new Writable({
      write(line: Buffer, _encoding, done) {
        if (line.includes('"msg":"search index maintained"')) runs++;
        else if (!line.includes('"level":30')) process.stderr.write(line);
        done();
      },
    }),
  );
  const index = new LanceSearchIndex({ dir, dimensions: null, soleWriter: true, restFactor, keepVersionsMs, logger });
  try {
    // From a maintained table: the last trickle's rows folded in, the fragments merged, old versions removed.
    await index.maintain();
    await sleep(keepVersionsMs + 1_000);
    await index.maintain();
    runs = 0;
    const cpu = process.cpuUsage();
    const written = writtenBytes();
    const latencies: number[] = [];
    let on = true;
    const searches = (async () => {
      for (let i = 0; on; i++) {
        const t = performance.now();
        await index.search({ query: queries[i % queries.length]!, collections: ["c"], filter: all, k: 10 });
        latencies.push(performance.now() - t);
        await sleep(200);
      }
    })();
    const start = Date.now();
    for (let w = 0; w < writes; w++) {
      await sleep(Math.max(0, start + w * everyMs - Date.now()));
      await index.indexDocuments(docs.slice(w * batch, (w + 1) * batch).map(item));
    }
    await sleep(Math.max(0, start + writes * everyMs - Date.now()));
    on = false;
    await searches;
    const used = process.cpuUsage(cpu);
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
    return {
      runs,
      cpuSeconds: (used.user + used.system) / 1e6,
      writtenMB: (writtenBytes() - written) / 1024 / 1024,
      p50: at(0.5),
      p99: at(0.99),
      searches: latencies.length,
      unindexed: await unindexedRows(),
    };
  } finally {
    await index.close();
  }
}

try {
  const docs: ScaleDoc[] = [];
  for (const b of scaleBatches(sentencesOf(corpus), n + 2 * writes * batch, 1_024)) docs.push(...b);
  console.log(
    `docstore trickle bench: ${fmt(n)} documents of ~1 KB in the embedded index, then ${batch} more every ${fmt(everyMs)} ms for ${seconds} s, one client searching every 200 ms; Node ${process.version}`,
  );
  const loader = new LanceSearchIndex({ dir, dimensions: null, soleWriter: true, maintainEveryMs: 0 });
  const t0 = Date.now();
  for (let i = 0; i < n; i += 1_024) await loader.indexDocuments(docs.slice(i, Math.min(n, i + 1_024)).map(item));
  await loader.close();
  console.log(`  loaded in ${fmt((Date.now() - t0) / 1000, 1)} s`);
  const settings: [string, number | undefined][] = [
    ["a run after every pause (restFactor 0)", 0],
    ["the default rest", undefined],
  ];
  const results: Figures[] = [];
  for (const [i, [name, restFactor]] of settings.entries()) {
    const from = n + i * writes * batch;
    results.push(await trickle(docs.slice(from, from + writes * batch), restFactor));
    const r = results.at(-1)!;
    console.log(
      `  ${name}: ${r.runs} runs, ${fmt(r.cpuSeconds, 1)} CPU s, ${fmt(r.writtenMB)} MB written, search p50 / p99 ${fmt(r.p50, 1)} / ${fmt(r.p99, 1)} ms (${r.searches}), ${r.unindexed} rows unindexed at the end`,
    );
  }
  const [before, after] = results as [Figures, Figures];
  console.log(
    `\nthe default rest against a run after every pause: CPU ${fmt(after.cpuSeconds / before.cpuSeconds, 2)}, bytes written ${fmt(after.writtenMB / before.writtenMB, 2)}, search p50 ${fmt(after.p50 / before.p50, 2)}, p99 ${fmt(after.p99 / before.p99, 2)}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
