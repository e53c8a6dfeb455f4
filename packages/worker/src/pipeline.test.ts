import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createChunker,
  createLogger,
  createServices,
  loadConfig,
  parseFilter,
  type ApiServices,
  type ExtractionSandbox,
  type ClaimedJob,
  type LocalCatalog,
} from "@docstore/shared";
import { LanceSearchIndex } from "@docstore/shared/index/lancedb";
import { indexCounts } from "@docstore/shared/testing";
import { createExtractor } from "./extractor.ts";
import { ReadyMarks } from "./ready-marks.ts";
import { ingestBatch, type PipelineDeps } from "./pipeline.ts";

// The embedded mode's parts, on a folder of their own: the catalog is also the queue.
let dir: string;
let services: ApiServices;
let catalog: LocalCatalog;
let extractor: ExtractionSandbox;
let deps: PipelineDeps;
/** What the pipeline logged at warn and above. */
let logged: string[];
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "docstore-pipeline-"));
  const config = loadConfig({ DATA_DIR: dir });
  logged = [];
  const logger = createLogger(
    "warn",
    new Writable({
      write: (line: Buffer, _encoding, done) => {
        logged.push(JSON.parse(line.toString()).msg);
        done();
      },
    }),
  );
  services = createServices(config, logger, { role: "api" });
  catalog = services.localCatalog!;
  extractor = createExtractor(config);
  deps = { ...services, extractor, logger, chunker: createChunker(config.ingest, config.ingest.threads) };
});
afterEach(async () => {
  await services.queue.stop();
  await extractor.close();
  await deps.chunker.close();
  await services.close();
  rmSync(dir, { recursive: true, force: true });
});

const c = "birds";

/** What the API does with a load: the blob, then the record; the old blob goes once replaced, unless `oldBlobLate`. */
async function load(docId: string, text: string, { oldBlobLate = false } = {}) {
  const bytes = new TextEncoder().encode(text);
  const jobId = randomUUID();
  const blobKey = `${c}/${jobId}`;
  await deps.blobs.put(blobKey, bytes);
  const { record, previous } = await catalog.accept({
    collection: c,
    docId,
    jobId,
    metadata: {},
    filename: null,
    contentType: "text/plain",
    blobKey,
    size: bytes.byteLength,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  });
  if (previous && !oldBlobLate) await deps.blobs.delete(previous.blobKey);
  return record;
}

/** What the API does with a delete. */
async function remove(docId: string) {
  const record = await catalog.delete(c, docId);
  await deps.index.deleteDocument(c, docId);
  await deps.blobs.delete(record!.blobKey);
}

const found = async (query: string) =>
  (await deps.index.search({ query, collections: [c], filter: parseFilter(""), k: 10 })).map((h) => `${h.docId}: ${h.text}`);

/**
 * Runs the queue (the catalog's documents table) with the ingestion pipeline, `before` called
 * with each batch before it is ingested, until no document is queued or processing.
 */
async function consume(before: (jobs: ClaimedJob[]) => Promise<void> = async () => {}) {
  const batches: ClaimedJob[][] = [];
  services.queue.start({
    ingest: async (jobs, attempt) => {
      batches.push(jobs);
      await before(jobs);
      await ingestBatch(jobs, deps, attempt);
    },
  });
  for (let waited = 0; ((await catalog.listCollections()).find((s) => s.name === c)?.pending ?? 0) > 0; waited += 20) {
    if (waited > 10_000) throw new Error("documents still pending after 10 s");
    await services.queue.enqueue([]); // wakes the consumer, as an accept does
    await sleep(20);
  }
  await services.queue.stop();
  return batches;
}

describe("ingestion of the jobs the catalog's queue claims", () => {
  it("takes each job's record from the claim", async () => {
    await load("a", "the osprey dives");
    const batches = await consume(async ([job]) => {
      expect(job!.record).toEqual(await catalog.get(c, "a"));
      expect(job!.record!.status).toBe("processing");
    });
    expect(batches.map((b) => b.map((j) => j.docId))).toEqual([["a"]]);
    expect(await found("osprey")).toEqual(["a: the osprey dives"]);
    expect(await catalog.get(c, "a")).toMatchObject({ status: "ready", chunks: 1 });
  });

  // The worker claims its next batch while it handles one: by the time a batch runs, its records
  // may be stale. Deletes and replacements still win.
  it("never brings back a document deleted or replaced after its claim", async () => {
    await load("gone", "the deleted falcon");
    await load("kept", "the first version osprey");
    await load("blobless", "the replaced heron");
    const batches = await consume(async (jobs) => {
      if (jobs.some((j) => j.version > 1)) return;
      expect(jobs.map((j) => [j.docId, j.record?.version])).toEqual([
        ["gone", 1],
        ["kept", 1],
        ["blobless", 1],
      ]);
      await remove("gone");
      // The old blob still there (the API removes it after answering): the old version is
      // indexed, then removed when marking it ready finds it superseded.
      await load("kept", "the second version kestrel", { oldBlobLate: true });
      // The old blob gone: the job is skipped, not marked failed.
      await load("blobless", "the replacing egret");
    });
    expect(batches.map((b) => b.map((j) => `${j.docId} v${j.version}`))).toEqual([
      ["gone v1", "kept v1", "blobless v1"],
      ["kept v2", "blobless v2"],
    ]);
    expect(await found("falcon")).toEqual([]);
    expect(await found("osprey")).toEqual([]);
    expect(await found("heron")).toEqual([]);
    expect(await found("kestrel")).toEqual(["kept: the second version kestrel"]);
    expect(await found("egret")).toEqual(["blobless: the replacing egret"]);
    expect(logged).toEqual([]); // no job failed
    expect(await catalog.get(c, "gone")).toBeNull();
    expect(await catalog.get(c, "kept")).toMatchObject({ version: 2, status: "ready", error: null });
    expect(await catalog.get(c, "blobless")).toMatchObject({ version: 2, status: "ready", error: null });
    expect((await catalog.listCollections()).find((s) => s.name === c)).toMatchObject({ documents: 2, ready: 2, pending: 0, failed: 0 });
  });
});

describe("documents marked ready once the index has published them", () => {
  /** A LanceDB index that maintains itself (the worker's), on a folder of its own, and the marks that wait for it. */
  const maintained = (options: { maintainEveryMs: number }) => {
    const index = new LanceSearchIndex({ dir: path.join(dir, "maintained", "index"), dimensions: null, publishAtOnceRows: 2, ...options });
    const readyMarks = new ReadyMarks(deps.logger);
    deps = { ...deps, index, readyMarks };
    return { index, readyMarks };
  };
  const unindexed = async () => (await indexCounts(path.join(dir, "maintained"))).unindexed;
  const statuses = async (ids: string[]) => Promise.all(ids.map(async (id) => (await catalog.get(c, id))?.status));
  const ids = ["a", "b", "c", "d", "e"];

  it("keeps a batch processing until a maintenance run folded it in, while the next batches go on", async () => {
    const { index } = maintained({ maintainEveryMs: 200 });
    for (const id of ids) await load(id, `the ${id} sandpiper`);
    const afterBatch: (string | undefined)[][] = [];
    services.queue.start({
      ingest: async (jobs, attempt) => {
        await ingestBatch(jobs, deps, attempt);
        afterBatch.push(await statuses(jobs.map((j) => j.docId)));
      },
    });
    for (let waited = 0; (await statuses(ids)).some((s) => s !== "ready"); waited += 20) {
      if (waited > 10_000) throw new Error("documents not ready after 10 s");
      await services.queue.enqueue([]);
      await sleep(20);
    }
    // The batch came back before its documents were marked (the run starts once writes pause).
    expect(afterBatch[0]!.every((s) => s === "processing")).toBe(true);
    expect(await unindexed()).toBe(0);
    expect((await index.search({ query: "sandpiper", collections: [c], filter: parseFilter(""), k: 10 })).length).toBe(5);
    await index.close();
  });

  it("marks what waits at once when the worker stops", async () => {
    // The timer would look in a minute; writes' pause would start a run in 1 s.
    const { index, readyMarks } = maintained({ maintainEveryMs: 60_000 });
    for (const id of ids) await load(id, `the ${id} turnstone`);
    let batches = 0;
    services.queue.start({
      ingest: async (jobs, attempt) => {
        await ingestBatch(jobs, deps, attempt);
        batches += jobs.length;
      },
    });
    for (let waited = 0; batches < ids.length; waited += 20) {
      if (waited > 10_000) throw new Error("batches not handled after 10 s");
      await services.queue.enqueue([]);
      await sleep(20);
    }
    await services.queue.stop();
    expect(await statuses(ids)).toEqual(ids.map(() => "processing"));
    await readyMarks.flush();
    expect(await statuses(ids)).toEqual(ids.map(() => "ready"));
    expect(await unindexed()).toBe(5); // listed as outside the index: searches scan their rows
    expect((await index.search({ query: "turnstone", collections: [c], filter: parseFilter(""), k: 10 })).length).toBe(5);
    await index.close();
  });
});
