/**
 * `pnpm bench:unindexed`: bare LanceDB's full-text search while part of the table is not yet in
 * its index (rows appended after the index was built or last updated), during `optimize()`, and
 * after it; then the same search asked for k and for 2k rows; then, one client at a time, what
 * each search costs per row not yet indexed (tails of 1,000 to 20,000 rows), and what one
 * `optimize()` costs after 1,000 new rows, twice, with the fragments its compaction rewrote
 * (LanceDB compacts fragments below a million rows into their neighbours, so a run can rewrite
 * the whole table). These bound what the embedded index can do while a load is being indexed,
 * and why its maintenance cannot simply run more often.
 * Prints figures; asserts nothing.
 *   N=200000             rows of about 1 KB (SciFact sentences), in one table
 *   UNINDEXED=0.5        the share of them appended after the full-text index was built
 */
import * as lancedb from "@lancedb/lancedb";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fmt, scifact } from "./parts/lib.ts";
import { sentencesOf, scaleBatches } from "./parts/scale-corpus.ts";
import { CONCURRENCY, pool, type Rate } from "./parts/scale-measure.ts";

const n = Number(process.env.N ?? 200_000);
const share = Number(process.env.UNINDEXED ?? 0.5);
if (!Number.isInteger(n) || n < 1) throw new Error(`N: a positive integer, not ${process.env.N}`);
if (!(share >= 0 && share < 1)) throw new Error(`UNINDEXED: a share from 0 to below 1, not ${process.env.UNINDEXED}`);
const BATCH = 5_000;
const indexedRows = Math.floor((n * (1 - share)) / BATCH) * BATCH;

const { corpus, tests } = scifact();
const queries = tests.map((t) => t.text);
const dir = mkdtempSync(path.join(tmpdir(), "bench-unindexed-"));
const started = performance.now();
const say = (line: string) => console.log(`${fmt((performance.now() - started) / 1000, 1).padStart(7)} s  ${line}`);
const rate = (r: Rate) => `${fmt(r.qps, 1)} q/s, p50 ${fmt(r.p50, 0)} ms, p99 ${fmt(r.p99, 0)} ms, ${fmt(r.hits, 1)} hits a call`;

console.log(
  `bare LanceDB: N=${fmt(n)} rows of ~1 KB, ${fmt(n - indexedRows)} of them appended after the full-text index; ${queries.length} SciFact test queries, ${CONCURRENCY} at once`,
);
try {
  const db = await lancedb.connect(dir);
  let table: lancedb.Table | undefined;
  let added = 0;
  const buildIndex = (t: lancedb.Table) =>
    t.createIndex("text", { config: lancedb.Index.fts({ language: "English", stem: true, removeStopWords: true, lowercase: true }) });
  // N rows for the table, and more from the same generator for the tails measured at the end.
  const batches = scaleBatches(sentencesOf(corpus), n + 30_000, BATCH);
  while (added < n) {
    const { value: batch, done } = batches.next();
    if (done) break;
    const rows = batch.map((d) => ({ id: d.id, text: d.text }));
    if (table) await table.add(rows);
    else table = await db.createTable("docs", rows);
    added += rows.length;
    if (added === indexedRows) await buildIndex(table);
  }
  const t = table!;
  if (indexedRows === 0) await buildIndex(t);
  say(`loaded; full-text index: ${JSON.stringify(await t.indexStats("text_idx"))}`);
  const search = (limit: number) => async (i: number) =>
    (
      await t
        .query()
        .fullTextSearch(queries[i % queries.length]!)
        .select(["id", "text", "_score"])
        .limit(limit)
        .toArray()
    ).length;
  say(`search with the rows above unindexed (32 calls): ${rate(await pool(CONCURRENCY, 32, 0, search(10)))}`);
  const optimizing = performance.now();
  let optimized = 0;
  const optimize = t.optimize().then(() => (optimized = (performance.now() - optimizing) / 1000));
  say(`search during optimize() (32 calls): ${rate(await pool(CONCURRENCY, 32, 0, search(10)))}`);
  await optimize;
  say(`optimize() took ${fmt(optimized, 1)} s; full-text index: ${JSON.stringify(await t.indexStats("text_idx"))}`);
  for (let round = 1; round <= 2; round++) {
    say(`round ${round}, search k=10 (>= 8 s): ${rate(await pool(CONCURRENCY, queries.length, 8, search(10)))}`);
    say(`round ${round}, search k=20 (>= 8 s): ${rate(await pool(CONCURRENCY, queries.length, 8, search(20)))}`);
  }
  // What each search costs per unindexed row, and what maintenance costs, one client at a time.
  await t.optimize();
  let spare: { id: string; text: string }[] = [];
  const next = (rows: number) => {
    while (spare.length < rows) {
      const batch = batches.next();
      if (batch.done) throw new Error("the corpus generator ran out");
      spare.push(...batch.value.map((d) => ({ id: `tail-${d.id}`, text: d.text })));
    }
    const out = spare.slice(0, rows);
    spare = spare.slice(rows);
    return out;
  };
  let tail = 0;
  for (const upTo of [1_000, 5_000, 10_000, 20_000]) {
    while (tail < upTo) {
      await t.add(next(1_000));
      tail += 1_000;
    }
    say(`${fmt(tail)} rows unindexed, 1 client (10 calls): ${rate(await pool(1, 10, 0, search(10)))}`);
  }
  const timed = async () => {
    const from = performance.now();
    const stats = await t.optimize();
    return `${fmt((performance.now() - from) / 1000, 2)} s, compaction: ${stats.compaction.fragmentsRemoved} fragments rewritten into ${stats.compaction.fragmentsAdded}`;
  };
  say(`optimize() of those ${fmt(tail)} rows: ${await timed()}`);
  for (let run = 1; run <= 2; run++) {
    await t.add(next(1_000));
    say(`optimize() after 1,000 more rows, run ${run} of 2: ${await timed()}`);
  }
  t.close();
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
