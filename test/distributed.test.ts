/**
 * What only the distributed mode has: worker processes that die, and dependencies (Redis, S3)
 * that go away and come back.
 */
import { describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { spawn, type ChildProcess } from "node:child_process";
import { connect, createServer } from "node:net";
import path from "node:path";
import { allSettled, catalogDocuments, collectionCounts, removeDir, startService, until, type Service } from "./harness.ts";
import {
  describeSkipped,
  indexAudit,
  QDRANT_BIN_SKIP,
  QDRANT_SKIP,
  QdrantTestServer,
  qdrantIndexAudit,
  qdrantSource,
  startS3Server,
} from "@docstore/shared/testing";
import { Queue } from "bullmq";
import { Redis } from "ioredis";

const N = 600;

/** What the index holds, read from its own storage (LanceDB files or the Qdrant collection). */
async function audit(svc: Service) {
  return svc.env.INDEX === "qdrant" ? qdrantIndexAudit(svc.env.QDRANT_URL!, svc.env.QDRANT_COLLECTION!) : indexAudit(svc.dataDir);
}

const INDEXES = [{ name: "LanceDB", index: "lancedb" as const }, ...(qdrantSource() ? [{ name: "Qdrant", index: "qdrant" as const }] : [])];
if (!qdrantSource()) describeSkipped("worker processes, index on Qdrant", QDRANT_SKIP);

describe.each(INDEXES)("worker processes, index on $name", ({ index: kind }) => {
  it("indexes every document exactly once when a worker is killed mid-run", async () => {
    const svc = await startService({ mode: "distributed", index: kind, workers: 1, env: { WORKER_CONCURRENCY: "2" } });
    const c = "workers";
    const filler = Array.from({ length: 1500 }, (_, w) => `term${w % 211}`).join(" ");
    for (let b = 0; b < N; b += 200) {
      const documents = Array.from({ length: 200 }, (_, j) => ({
        doc_id: `d${b + j}`,
        text: `doc ${b + j} has marker${b + j}. ${filler}`,
      }));
      expect((await svc.request("POST", "/load_texts_to_collection", { query: { collection_name: c }, json: { documents } })).status).toBe(
        202,
      );
    }
    await until(async () => ((await collectionCounts(svc, c))?.ready ?? 0) > 20);
    const victim = svc.workers[0]!;
    victim.kill("SIGKILL");
    await new Promise((r) => victim.once("exit", r));
    const midway = await collectionCounts(svc, c);
    expect(midway!.pending).toBeGreaterThan(0);

    await svc.startWorker();
    // A guard against a hang, not a speed check: on a loaded 2-core machine this takes minutes.
    await until(async () => (await collectionCounts(svc, c))?.ready === N, 240_000);

    const catalog = new Database(path.join(svc.dataDir, "catalog.sqlite"), { readonly: true });
    const stuck = catalog.prepare("SELECT count(*) AS n FROM documents WHERE status != 'ready'").get() as { n: number };
    const expected = catalog.prepare("SELECT sum(chunks) AS n FROM documents").get() as { n: number };
    catalog.close();
    const index = await audit(svc);
    expect(stuck.n).toBe(0);
    expect(index.documents).toBe(N);
    expect(index.duplicates).toEqual([]);
    expect(index.chunks).toBe(expected.n);
    for (const i of [0, 137, 299, 599]) {
      const r = await svc.request("GET", "/get_relevant_documents", { query: { query: `marker${i}`, collection_names: c, k: 5 } });
      expect(r.body.results.map((h: { doc_id: string }) => h.doc_id)).toEqual([`d${i}`]);
    }
    await svc.stop();
    removeDir(svc.dataDir);
  }, 330_000);
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A Redis of this test's own (the machine's is shared by every other test). */
async function startRedis(port: number): Promise<ChildProcess> {
  const proc = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  const answers = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
  await until(answers, 10_000);
  return proc;
}

const load = (svc: Service, collection: string, docId: string) =>
  svc.request("POST", "/load_text_to_collection", {
    query: { collection_name: collection, doc_id: docId, wait: "true" },
    json: { text: `outage test ${docId}`, metadata: { status: "open" } },
  });

describe("dependency outages", () => {
  it("answers 503 while Redis is down, writes nothing, and recovers without a restart", async () => {
    const port = await freePort();
    let redis = await startRedis(port);
    const svc = await startService({ mode: "distributed", workers: 1, env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
    try {
      expect((await load(svc, "outage", "before")).body.status).toBe("ready");
      redis.kill("SIGKILL");
      await new Promise((r) => redis.once("exit", r));

      const down = await load(svc, "outage", "during");
      expect(down.status).toBe(503);
      expect(down.body.detail).toMatch(/queue unavailable/);
      expect(down.headers.get("retry-after")).toBe("5");
      expect((await svc.request("GET", "/get_document_status", { query: { collection_name: "outage", id_value: "during" } })).status).toBe(
        404,
      );
      const fresh = await load(svc, "outage-new", "during");
      expect(fresh.status).toBe(503);
      const names = (await svc.request("GET", "/get_list_of_collection")).body.collections.map((c: { name: string }) => c.name);
      expect(names).toEqual(["outage"]);
      expect((await svc.request("GET", "/readyz", { token: null })).status).toBe(503);

      redis = await startRedis(port);
      const back = await until(async () => {
        const r = await load(svc, "outage", "after");
        return r.status === 200 ? r : undefined;
      }, 30_000);
      expect(back.body.status).toBe("ready");
      expect((await svc.request("GET", "/readyz", { token: null })).status).toBe(200);
    } finally {
      await svc.stop();
      redis.kill("SIGKILL");
      removeDir(svc.dataDir);
    }
  }, 90_000);

  it("answers 503 while S3 is down, writes nothing, and recovers without a restart", async () => {
    const s3 = await startS3Server();
    const svc = await startService({
      mode: "distributed",
      workers: 1,
      env: { S3_ENDPOINT: s3.config.endpoint, S3_BUCKET: s3.config.bucket },
    });
    try {
      expect((await load(svc, "s3-outage", "before")).body.status).toBe("ready");
      await s3.down();
      const down = await load(svc, "s3-outage", "during");
      expect(down.status).toBe(503);
      expect(down.body.detail).toMatch(/blob store unavailable/);
      expect(
        (await svc.request("GET", "/get_document_status", { query: { collection_name: "s3-outage", id_value: "during" } })).status,
      ).toBe(404);
      await s3.restart();
      const back = await until(async () => {
        const r = await load(svc, "s3-outage", "after");
        return r.status === 200 ? r : undefined;
      }, 30_000);
      expect(back.body.status).toBe("ready");
    } finally {
      await svc.stop();
      await s3.stop();
      removeDir(svc.dataDir);
    }
  }, 90_000);
});

const canStopQdrant = (() => {
  const source = qdrantSource();
  return source !== null && "bin" in source;
})();
if (!canStopQdrant) describeSkipped("Qdrant outage", qdrantSource() ? QDRANT_BIN_SKIP : QDRANT_SKIP);

describe.runIf(canStopQdrant)("Qdrant outage", () => {
  it("answers 503 with Retry-After while Qdrant is down, loses nothing, and recovers without a restart", async () => {
    const qdrant = (await QdrantTestServer.fromEnv())!;
    const svc = await startService({ mode: "distributed", index: "qdrant", qdrant, workers: 1, env: { WORKER_CONCURRENCY: "2" } });
    const c = "qdrant-outage";
    const acknowledged = new Set<string>();
    const filler = Array.from({ length: 1500 }, (_, w) => `term${w % 211}`).join(" ");
    /** Loads documents from..from+n-1; a 202 acknowledges them, else it must be a 503 with Retry-After. */
    const loadBatch = async (from: number, n: number) => {
      const documents = Array.from({ length: n }, (_, j) => ({
        doc_id: `d${from + j}`,
        text: `doc ${from + j} has marker${from + j}. ${filler}`,
      }));
      const r = await svc.request("POST", "/load_texts_to_collection", { query: { collection_name: c }, json: { documents } });
      if (r.status === 202) for (const d of documents) acknowledged.add(d.doc_id);
      else {
        expect(r.status, JSON.stringify(r.body)).toBe(503);
        expect(r.headers.get("retry-after")).toBe("5");
      }
      return r.status;
    };
    const search = (q: string) => svc.request("GET", "/get_relevant_documents", { query: { query: q, collection_names: c, k: 5 } });
    try {
      expect((await load(svc, c, "before")).body.status).toBe("ready");
      acknowledged.add("before");

      // Qdrant goes away (killed) while a load is being indexed.
      expect(await loadBatch(0, 300)).toBe(202);
      await until(async () => ((await collectionCounts(svc, c))?.ready ?? 0) > 20);
      await qdrant.stop({ crash: true });
      expect((await collectionCounts(svc, c))!.pending).toBeGreaterThan(0);

      // Searches and tag lookups: 503 with Retry-After, while it is down.
      for (const r of [
        await search("marker1"),
        await svc.request("GET", "/get_content_by_tag", { query: { collection_name: c, tag_info: "status=open" } }),
      ]) {
        expect(r.status, JSON.stringify(r.body)).toBe(503);
        expect(r.headers.get("retry-after")).toBe("5");
        expect(r.body.detail).toMatch(/Qdrant is unavailable/);
      }
      expect((await svc.request("GET", "/readyz", { token: null })).status).toBe(503);
      // Loads meanwhile are accepted (they wait in the queue) or refused with 503.
      await loadBatch(300, 50);
      // The worker's jobs fail and are retried, none given up on, while Qdrant stays down a while.
      await new Promise((r) => setTimeout(r, 3000));
      expect((await collectionCounts(svc, c))!.failed).toBe(0);
      expect(svc.output).toMatch(/Qdrant is unavailable[^\n]*"msg":"ingestion job failed"/);

      // Back on the same storage: the same docstore processes carry on.
      await qdrant.start();
      const settled = await allSettled(svc, c, acknowledged.size, 120_000);
      expect(settled).toMatchObject({ documents: acknowledged.size, ready: acknowledged.size, failed: 0 });

      const rows = catalogDocuments(svc, c);
      expect(new Set(rows.map((r) => r.doc_id))).toEqual(acknowledged);
      const index = await qdrantIndexAudit(qdrant.url, svc.env.QDRANT_COLLECTION!);
      expect(index.duplicates).toEqual([]);
      expect(index.orphans).toBe(0);
      expect(index.documents).toBe(acknowledged.size);
      for (const r of rows) {
        expect(r.status).toBe("ready");
        expect(r.chunks).toBeGreaterThan(0);
        expect(index.chunksPerDocument.get(`${c}/${r.doc_id}`) ?? 0, r.doc_id).toBe(r.chunks);
      }
      for (const i of [0, 150, 299, ...(acknowledged.has("d349") ? [349] : [])]) {
        expect((await search(`marker${i}`)).body.results.map((h: { doc_id: string }) => h.doc_id)).toEqual([`d${i}`]);
      }
      expect((await svc.request("GET", "/readyz", { token: null })).status).toBe(200);
    } finally {
      try {
        await svc.stop();
      } finally {
        await qdrant.close();
        removeDir(svc.dataDir);
      }
    }
  }, 240_000);
});

describe("jobs that wait", () => {
  it("never brings back a document deleted or replaced while its job waited", async () => {
    const svc = await startService({ mode: "distributed", workers: 0 });
    try {
      const c = "waiting";
      const load = (docId: string, text: string) =>
        svc.request("POST", "/load_text_to_collection", { query: { collection_name: c, doc_id: docId }, json: { text } });
      expect((await load("gone", "the deleted falcon")).status).toBe(202);
      expect((await load("kept", "the first version osprey")).status).toBe(202);
      expect((await load("kept", "the second version kestrel")).status).toBe(202);
      expect(
        (await svc.request("DELETE", "/delete_document_from_collection", { query: { collection_name: c, id_value: "gone" } })).status,
      ).toBe(200);

      await svc.startWorker();
      await until(async () => (await collectionCounts(svc, c))?.ready === 1);
      await new Promise((r) => setTimeout(r, 500)); // the stale jobs have run by now, or run now
      const search = async (q: string) =>
        (await svc.request("GET", "/get_relevant_documents", { query: { query: q, collection_names: c } })).body.results.map(
          (h: { doc_id: string; text: string }) => `${h.doc_id}: ${h.text}`,
        );
      expect(await search("falcon")).toEqual([]);
      expect(await search("osprey")).toEqual([]);
      expect(await search("kestrel")).toEqual(["kept: the second version kestrel"]);
      const list = await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: c } });
      expect(list.body.documents.map((d: { doc_id: string; version: number }) => [d.doc_id, d.version])).toEqual([["kept", 2]]);
    } finally {
      await svc.stop();
      removeDir(svc.dataDir);
    }
  }, 60_000);

  it("drops a malformed job payload without retrying it, and keeps working", async () => {
    const svc = await startService({ mode: "distributed", workers: 1 });
    const connection = new Redis(svc.env.REDIS_URL!, { maxRetriesPerRequest: null });
    const queue = new Queue("ingest", { connection, prefix: svc.env.REDIS_PREFIX });
    try {
      const job = await queue.add("ingest", { collection: "x", docId: 42, version: "one" }, { jobId: "malformed-1", attempts: 5 });
      await until(async () => (await job.getState()) === "completed");
      const done = await queue.getJob(job.id!);
      expect(done?.attemptsMade).toBe(1);
      expect(svc.output).toContain("dropped a malformed ingestion job");
      const r = await svc.request("POST", "/load_text_to_collection", {
        query: { collection_name: "after", wait: "true" },
        json: { text: "still fine" },
      });
      expect(r.body.status).toBe("ready");
      // The worker process exports the drop, and the job it then handled, as metrics.
      const metrics = await (await fetch(svc.workerMetrics[0]!)).text();
      expect(metrics).toMatch(/^docstore_jobs_dropped_total\{queue="ingest"\} 1$/m);
      expect(metrics).toMatch(/^docstore_jobs_handled_total\{queue="ingest",outcome="done"\} [1-9]/m);
    } finally {
      await queue.close();
      connection.disconnect();
      await svc.stop();
      removeDir(svc.dataDir);
    }
  }, 60_000);
});
