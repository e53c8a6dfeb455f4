import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { LanceSearchIndex } from "./src/index/lancedb.ts";
import { scaleBatches, sentencesOf, metadataJson } from "../../bench/scale-corpus.ts";
import { scifact } from "../../bench/lib.ts";
const dir = mkdtempSync(path.join(tmpdir(), "opt-"));
const index = new LanceSearchIndex({ dir, dimensions: null, maintainEveryMs: 0, maintainAfterRows: Infinity, soleWriter: true, keepVersionsMs: 0 });
let n = 0;
let t = performance.now(), writes = 0;
for (const batch of scaleBatches(sentencesOf(scifact().corpus), Number(process.env.N ?? 200000), 512)) {
  const s = performance.now();
  await index.indexDocuments(batch.map((d) => ({ doc: { collection: "c", docId: `d${n++}`, version: 1, metadata: metadataJson(d), text: d.text }, chunks: [{ index: 0, text: d.text, start: 0, end: d.text.length }] })));
  writes += performance.now() - s;
  if (n % 20480 === 0) {
    const m = performance.now();
    const stats = await index.maintain();
    console.log(`${n} rows: 40 writes ${writes.toFixed(0)} ms; maintain ${(performance.now() - m).toFixed(0)} ms`);
    writes = 0;
  }
}
await index.close();
