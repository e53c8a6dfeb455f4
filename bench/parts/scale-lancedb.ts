/**
 * The engine's ceiling for `pnpm bench:scale`: bare LanceDB in this process, one table of the
 * same documents, native full-text index (English stemming, stopwords removed, lowercase), a
 * bitmap index on status and a btree on priority; the same three query sets, 8 at once.
 */
import * as lancedb from "@lancedb/lancedb";
import { Field, Int32, Int64, Schema, Utf8 } from "apache-arrow";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fmt } from "./lib.ts";
import { scaleBatches } from "./scale-corpus.ts";
import { CONCURRENCY, diskBytes, pool, procBytes, rssSampler, MB, type ScaleOptions, type SideFigures } from "./scale-measure.ts";

const BATCH = 10_000;
/** The docstore filters `status=open^priority<=2` and `status=open^priority=2`, in LanceDB's SQL. */
const FILTER_SQL = "status = 'open' AND priority <= 2";
const TAG_SQL = "status = 'open' AND priority = 2";
/** Every column a docstore answer carries (text and metadata). */
const COLUMNS = ["id", "text", "status", "priority", "created", "type"];

const schema = new Schema([
  new Field("id", new Utf8(), false),
  new Field("text", new Utf8(), false),
  new Field("status", new Utf8(), false),
  new Field("priority", new Int32(), false),
  new Field("created", new Int64(), false), // milliseconds since the epoch
  new Field("type", new Utf8(), false),
]);

async function build(table: lancedb.Table, opts: ScaleOptions) {
  let rawBytes = 0;
  let added = 0;
  let addSeconds = 0;
  let lastPrint = performance.now();
  for (const batch of scaleBatches(opts.sentences, opts.n, BATCH)) {
    const rows = batch.map((d) => {
      rawBytes += Buffer.byteLength(d.text);
      return { id: d.id, text: d.text, status: d.status, priority: d.priority, created: BigInt(d.createdMs), type: d.type };
    });
    // Only the write is timed (the JS objects' conversion to Arrow included), not generating the corpus.
    const t = performance.now();
    await table.add(rows);
    addSeconds += (performance.now() - t) / 1000;
    added += rows.length;
    if (performance.now() - lastPrint > 10_000) {
      lastPrint = performance.now();
      console.log(`  added ${fmt(added)} rows (${fmt(added / addSeconds)} rows/s while writing)`);
    }
  }
  const t = performance.now();
  await table.createIndex("text", {
    config: lancedb.Index.fts({ language: "English", stem: true, removeStopWords: true, lowercase: true }),
  });
  const ftsSeconds = (performance.now() - t) / 1000;
  await table.createIndex("status", { config: lancedb.Index.bitmap() });
  await table.createIndex("priority", { config: lancedb.Index.btree() });
  const indexSeconds = (performance.now() - t) / 1000;
  console.log(
    `  ${fmt(added)} rows added in ${fmt(addSeconds, 1)} s; full-text index ${fmt(ftsSeconds, 1)} s, all indexes ${fmt(indexSeconds, 1)} s`,
  );
  return { rawBytes, seconds: addSeconds + indexSeconds };
}

/** Tag lookup: matching rows' dates and row ids, sorted newest first in JS, then the first 100 rows fetched whole. */
async function tagLookup(table: lancedb.Table): Promise<number> {
  const keys = await table.query().where(TAG_SQL).select(["created"]).withRowId().toArrow();
  const created = keys.getChild("created")!.toArray() as BigInt64Array;
  const rowIds = keys.getChild("_rowid")!.toArray() as BigUint64Array;
  const order = Array.from(created.keys()).sort((a, b) => (created[b]! > created[a]! ? 1 : created[b]! < created[a]! ? -1 : 0));
  const top = order.slice(0, 100).map((i) => rowIds[i]!);
  if (top.length === 0) return 0;
  // takeRowIds answers in row-id order, not the order asked (and skips ids it lacks): sort again.
  const rows = await table.takeRowIds(top).select(COLUMNS).toArray();
  rows.sort((a, b) => (b.created > a.created ? 1 : b.created < a.created ? -1 : 0));
  return rows.length;
}

export async function lancedbFigures(opts: ScaleOptions): Promise<SideFigures> {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-lancedb-"));
  const rss = rssSampler(process.pid);
  console.log(
    `bare LanceDB (@lancedb/lancedb, in process), table in ${dir}; this process's RSS before: ${fmt(procBytes(process.pid, "VmRSS") / MB)} MB; LANCE_CPU_THREADS ${process.env.LANCE_CPU_THREADS ?? "unset"}, TOKIO_WORKER_THREADS ${process.env.TOKIO_WORKER_THREADS ?? "unset"} (as the service's)`,
  );
  const db = await lancedb.connect(dir);
  try {
    const table = await db.createEmptyTable("docs", schema);
    const built = await build(table, opts);
    const indexedPerSec = opts.n / built.seconds;
    console.log(`  indexed: ${fmt(indexedPerSec)} docs/s; raw text ${fmt(built.rawBytes / MB, 1)} MB`);
    const search = (where: string | undefined) => async (i: number) => {
      const q = table
        .query()
        .fullTextSearch(opts.queries[i % opts.queries.length]!)
        .select([...COLUMNS, "_score"])
        .limit(10);
      return (await (where ? q.where(where) : q).toArray()).length;
    };
    const sets = {
      first: await pool(CONCURRENCY, 16, 0, search(undefined)),
      search: await pool(CONCURRENCY, opts.queries.length, opts.seconds, search(undefined)),
      filtered: await pool(CONCURRENCY, opts.queries.length, opts.seconds, search(FILTER_SQL)),
      tag: await pool(CONCURRENCY, opts.queries.length, opts.seconds, () => tagLookup(table)),
    };
    const peakRss = rss.stop();
    const hwm = procBytes(process.pid, "VmHWM");
    table.close();
    return { indexedPerSec, indexSeconds: built.seconds, ...sets, peakRss, hwm, disk: diskBytes(dir), rawBytes: built.rawBytes };
  } finally {
    rss.stop();
    db.close();
    if (opts.keep) console.log(`  kept the LanceDB table in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}
