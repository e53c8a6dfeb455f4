/**
 * `node --expose-gc bench/probes/doctor.ts [documents]` (default 200,000): how long
 * `docstore doctor` takes over one collection of that many documents, and how much memory it holds while it runs. Builds
 * the embedded mode's stores in a temporary folder with the service's own adapters (SQLite
 * catalog, small raw copies beside it, LanceDB index, compacted as the service's maintenance
 * leaves it), damages a few documents, then runs the report-only check in this process.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { SqliteCatalog } from "@docstore/shared/catalog/sqlite";
import { FsBlobStore } from "@docstore/shared/blob/fs";
import { LanceSearchIndex } from "@docstore/shared/index/lancedb";
import { LocalQueue } from "@docstore/shared/queue/local";
import { CATALOG_SCHEMA, openDatabase } from "@docstore/shared/sqlite/db";
import { GroupCommit } from "@docstore/shared/sqlite/group-commit";
import { blobKeyFor } from "@docstore/shared/domain/names";
import { createLogger } from "@docstore/shared/logger";
import { runDoctor } from "@docstore/shared/doctor/doctor";
import { fmt } from "../parts/lib.ts";

const N = Number(process.argv[2] ?? 200_000);
const BATCH = 2000;
const DAMAGED = 10;
const MB = 1024 * 1024;

/** A time-ordered UUIDv7, as the API makes job ids (its key's instant: an hour ago, well past the orphan grace). */
function jobId(i: number): string {
  const hex =
    (Date.now() - 3600_000 * 2 + i).toString(16).padStart(12, "0") +
    "7" +
    randomUUID().replaceAll("-", "").slice(0, 3) +
    "8" +
    randomUUID().replaceAll("-", "").slice(0, 15);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

const dir = mkdtempSync(path.join(tmpdir(), "docstore-bench-doctor-"));
const logger = createLogger("silent");
const db = openDatabase(path.join(dir, "catalog.sqlite"), CATALOG_SCHEMA);
const commit = new GroupCommit(db);
const catalog = new SqliteCatalog(db, commit);
const blobs = new FsBlobStore(path.join(dir, "blobs"), { shared: { db, commit } });
const index = new LanceSearchIndex({
  dir: path.join(dir, "index"),
  dimensions: null,
  soleWriter: true,
  maintainEveryMs: 0,
  maintainAfterRows: Infinity,
});
const queue = new LocalQueue(catalog, logger);
const c = "bench";

try {
  console.log(`building ${fmt(N)} documents (catalog, raw copies, index) in ${dir}`);
  const built = performance.now();
  for (let from = 0; from < N; from += BATCH) {
    const ids = Array.from({ length: Math.min(BATCH, N - from) }, (_, j) => from + j);
    const items = await Promise.all(
      ids.map(async (i) => {
        const job = jobId(i);
        const text = `document ${i} about item${i % 977} and topic${i % 131}, a short text like a ticket's`;
        const blobKey = blobKeyFor(c, job);
        await blobs.put(blobKey, Buffer.from(text));
        const { record } = await catalog.accept({
          collection: c,
          docId: `doc-${String(i).padStart(7, "0")}`,
          jobId: job,
          metadata: { priority: i % 5 },
          filename: null,
          contentType: "text/plain",
          blobKey,
          size: text.length,
          sha256: "0".repeat(64),
        });
        return { record, text };
      }),
    );
    await index.indexDocuments(
      items.map(({ record, text }) => ({
        doc: { collection: c, docId: record.docId, version: record.version, metadata: record.metadata, text },
        chunks: [{ index: 0, text, start: 0, end: text.length }],
      })),
    );
    await Promise.all(items.map(({ record }) => catalog.markReady(c, record.docId, record.version, 1)));
    if ((from / BATCH) % 20 === 0) console.log(`  ${fmt(from + ids.length)} documents`);
  }
  await index.maintain();
  console.log(`built in ${fmt((performance.now() - built) / 1000, 1)} s`);

  // A few of each kind of damage, so that the check has something to find.
  const victims = Array.from({ length: DAMAGED }, (_, k) => `doc-${String(Math.floor(((k + 0.5) * N) / DAMAGED)).padStart(7, "0")}`);
  for (const id of victims) await index.deleteDocument(c, id);

  // The workers' lost-job query (listPending), among the 200,000: 1,000 documents still queued.
  for (let i = 0; i < 1000; i++) {
    const job = jobId(N + i);
    await blobs.put(blobKeyFor(c, job), Buffer.from("x"));
    await catalog.accept({
      collection: c,
      docId: `pending-${i}`,
      jobId: job,
      metadata: {},
      filename: null,
      contentType: "text/plain",
      blobKey: blobKeyFor(c, job),
      size: 1,
      sha256: "0".repeat(64),
    });
  }
  const future = new Date(Date.now() + 60_000).toISOString();
  const q = performance.now();
  let cursor: string | null = null;
  let pages = 0;
  do {
    cursor = (await catalog.listPending(future, 200, cursor)).next;
    pages++;
  } while (cursor !== null);
  console.log(
    `listPending: ${pages} pages of up to 200 pending documents among ${fmt(N + 1000)}, ${fmt((performance.now() - q) / pages, 2)} ms a page`,
  );

  global.gc?.();
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  }, 50);
  const t = performance.now();
  const report = await runDoctor({ catalog, index, blobs, queue }, { repair: false, collections: null, lostAfterMs: 60_000 });
  const seconds = (performance.now() - t) / 1000;
  clearInterval(sampler);
  console.log(`found: ${JSON.stringify(report.found)} (${DAMAGED} documents' chunks deleted)`);
  console.log(
    `checked ${fmt(report.checked.documents)} records (${fmt(N)} ready, 1,000 queued), ${fmt(report.checked.indexDocuments)} index documents, ${fmt(report.checked.blobs)} raw copies`,
  );
  console.log(
    `doctor over ${fmt(N)} documents: ${fmt(seconds, 1)} s (${fmt(N / seconds)} documents/s); ` +
      `heap ${fmt(base.heapUsed / MB)} MB before, at most ${fmt(peakHeap / MB)} MB during; RSS ${fmt(base.rss / MB)} MB before, at most ${fmt(peakRss / MB)} MB during`,
  );
} finally {
  await index.close();
  await blobs.close();
  await catalog.close();
  rmSync(dir, { recursive: true, force: true });
}
