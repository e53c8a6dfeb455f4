/**
 * `docstore doctor` and `POST /doctor` on a real service whose state is damaged underneath it,
 * the way a crash, a lost disk or a hand would: a raw copy deleted, a document's rows deleted
 * from the index, a catalog row removed, an orphan raw copy added, a queued job lost from Redis.
 * The report must name each one, the repair must put each right, and a second run find nothing.
 */
import { describe, expect, it } from "vitest";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { connect } from "@lancedb/lancedb";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { indexAudit, indexRows } from "@docstore/shared/testing";
import { runCli } from "./cli-run.ts";
import { blobFilesDir, serviceS3 } from "./service-blobs.ts";
import { removeDir, startService, uniqueName, until, type Mode, type Service } from "./harness.ts";

const ADMIN = "doctor-admin-token-0123456789";
const WRITER = "doctor-writer-token-0123456789";

/** A UUIDv7 made `agoMs` ago, as the API names a version's raw copy (blobKeyFor). */
function uuidV7(agoMs: number): string {
  const hex = (Date.now() - agoMs).toString(16).padStart(12, "0") + "7abc8def0123456789ab";
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The catalog's own file: the service keeps it in DATA_DIR in both modes (CATALOG=sqlite). */
function catalogDb(svc: Service) {
  const db = new Database(path.join(svc.dataDir, "catalog.sqlite"));
  db.pragma("busy_timeout = 10000");
  return db;
}

interface Row {
  doc_id: string;
  status: string;
  version: number;
  chunks: number;
  blob_key: string;
  job_id: string;
  error: string | null;
}

function rows(svc: Service, collection: string): Map<string, Row> {
  const db = catalogDb(svc);
  try {
    const all = db
      .prepare("SELECT doc_id, status, version, chunks, blob_key, job_id, error FROM documents WHERE collection = ?")
      .all(collection) as Row[];
    return new Map(all.map((r) => [r.doc_id, r]));
  } finally {
    db.close();
  }
}

/** The raw-copy store as the service has it: files and small blobs in DATA_DIR, or the S3 server. */
function blobStore(svc: Service) {
  if (svc.env.BLOB_STORE === "s3") {
    const s3 = serviceS3(svc);
    return {
      put: (key: string, data: string) => s3.put(key, Buffer.from(data)),
      delete: (key: string) => s3.delete(key),
      exists: async (key: string) =>
        s3.get(key).then(
          () => true,
          () => false,
        ),
      close: () => s3.close(),
    };
  }
  const file = (key: string) => path.join(blobFilesDir(svc), ...key.split("/"));
  return {
    put: async (key: string, data: string) => {
      mkdirSync(path.dirname(file(key)), { recursive: true });
      writeFileSync(file(key), data);
    },
    /** A file, or a row of the small blobs kept in catalog.sqlite; it must have been there. */
    delete: async (key: string) => {
      if (existsSync(file(key))) return rmSync(file(key));
      const db = catalogDb(svc);
      try {
        expect(db.prepare("DELETE FROM blobs WHERE key = ?").run(key).changes).toBe(1);
      } finally {
        db.close();
      }
    },
    exists: async (key: string) => {
      if (existsSync(file(key))) return true;
      const db = catalogDb(svc);
      try {
        return db.prepare("SELECT 1 FROM blobs WHERE key = ?").get(key) !== undefined;
      } finally {
        db.close();
      }
    },
    close: async () => {},
  };
}

/** Deletes rows of the chunk table straight from its files, beside the running service. */
async function deleteIndexRows(svc: Service, where: string): Promise<void> {
  const db = await connect(path.join(svc.dataDir, "index"));
  try {
    const table = await db.openTable("chunks");
    const before = await table.countRows(where);
    expect(before).toBeGreaterThan(0);
    await table.delete(where);
    table.close();
  } finally {
    db.close();
  }
}

const indexed = async (svc: Service, collection: string, docId: string) =>
  (await indexRows(svc.dataDir, `collection = '${collection}' AND doc_id = '${docId}'`)).filter((r) => r.chunk >= 0).length;

const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i % 97} word${i}`).join(" ");

const MODES: { mode: Mode }[] = [{ mode: "embedded" }, { mode: "distributed" }];

describe.each(MODES)("docstore doctor, $mode mode", ({ mode }) => {
  it("names each disagreement of catalog, raw copies, index and queue, repairs each, and then finds none", async () => {
    const distributed = mode === "distributed";
    const svc = await startService({
      mode,
      workers: distributed ? 1 : 0,
      env: { API_TOKENS: `${ADMIN},${WRITER}:read+write`, RECOVERY_INTERVAL_S: "1", CHUNK_TOKENS: "64", CHUNK_OVERLAP_TOKENS: "8" },
    });
    const blobs = blobStore(svc);
    const c = uniqueName("doctor");
    try {
      const texts: Record<string, string> = {
        "keep-a": "a document nobody touches, about herons",
        "keep-b": words(200, "egret"),
        rawgone: words(12_000, "raw"), // over 64 KiB: a file of its own (or an S3 object)
        gone: "raw copy and chunks both gone, about cormorants",
        unindexed: "its chunks are deleted from the index, about pelicans",
        fewer: words(300, "ibis"),
        uncataloged: "its catalog row is removed, about storks",
        failed: "marked failed by hand while searchable, about cranes",
      };
      const documents = Object.entries(texts).map(([doc_id, text]) => ({ doc_id, text }));
      const loaded = await svc.request("POST", "/load_texts_to_collection", {
        query: { collection_name: c, wait: "true" },
        json: { documents },
      });
      expect(loaded.status, JSON.stringify(loaded.body)).toBe(200);
      expect(loaded.body.documents.every((d: { status: string }) => d.status === "ready")).toBe(true);
      const before = rows(svc, c);
      expect(before.get("fewer")!.chunks).toBeGreaterThan(2);
      expect(before.get("rawgone")!.chunks).toBeGreaterThan(2);

      let lostJob: string | null = null;
      if (distributed) {
        // No worker from here on, so that nothing but the doctor repairs the lost job.
        const worker = svc.workers.pop()!;
        worker.kill("SIGTERM");
        await new Promise((r) => worker.once("exit", r));
        const r = await svc.request("POST", "/load_text_to_collection", {
          query: { collection_name: c, doc_id: "lost" },
          json: { text: "its job is lost, about spoonbills" },
        });
        expect(r.status).toBe(202);
        lostJob = r.body.job_id as string;
        const connection = new Redis(svc.env.REDIS_URL!, { maxRetriesPerRequest: null });
        const queue = new Queue("ingest", { connection, prefix: svc.env.REDIS_PREFIX });
        try {
          expect(await queue.getJobState(lostJob)).toBe("waiting");
          expect(await queue.remove(lostJob)).toBe(1); // its keys are gone, as after Redis restarted empty
        } finally {
          await queue.close();
          connection.disconnect();
        }
      }

      // The damage.
      await blobs.delete(before.get("rawgone")!.blob_key);
      await blobs.delete(before.get("gone")!.blob_key);
      await deleteIndexRows(svc, `collection = '${c}' AND doc_id IN ('gone', 'unindexed')`);
      await deleteIndexRows(svc, `collection = '${c}' AND doc_id = 'fewer' AND chunk = 1`);
      const db = catalogDb(svc);
      db.prepare("DELETE FROM documents WHERE collection = ? AND doc_id = 'uncataloged'").run(c);
      db.prepare("UPDATE documents SET status = 'failed', error = 'failed by hand' WHERE collection = ? AND doc_id = 'failed'").run(c);
      db.close();
      const orphan = `${c}/${uuidV7(2 * 3600_000).slice(0, 8)}/${uuidV7(2 * 3600_000)}`;
      await blobs.put(orphan, "nobody names me");
      const fresh = `${c}/${uuidV7(0).slice(0, 8)}/${uuidV7(0)}`;
      await blobs.put(fresh, "maybe a load in flight: too new to judge");
      await new Promise((r) => setTimeout(r, 1500)); // past RECOVERY_INTERVAL_S, the grace of a lost job

      // Report only: every disagreement named, nothing changed.
      const report = await svc.request("POST", "/doctor", { query: { collection_name: c } });
      expect(report.status, JSON.stringify(report.body)).toBe(200);
      const expected = {
        blob_missing: 1,
        index_missing: 1,
        index_mismatch: 1,
        index_stale: 1,
        index_orphan: 1,
        job_lost: distributed ? 1 : 0,
        blob_orphan: 1,
      };
      expect(report.body.found).toEqual(expected);
      expect(report.body.repaired).toEqual(Object.fromEntries(Object.keys(expected).map((k) => [k, 0])));
      expect(report.body.unrepaired).toBe(distributed ? 7 : 6);
      expect(report.body.unrepairable).toEqual({ raw_copy_missing: 1 });
      const named = (body: { examples: { kind: string; doc_id: string | null; detail: string }[] }) =>
        Object.fromEntries(body.examples.map((e) => [e.kind, e.doc_id ?? e.detail]));
      expect(named(report.body)).toEqual({
        raw_copy_missing: "rawgone",
        blob_missing: "gone",
        index_missing: "unindexed",
        index_mismatch: "fewer",
        index_orphan: "uncataloged",
        index_stale: "failed",
        blob_orphan: expect.stringContaining(orphan),
        ...(distributed ? { job_lost: "lost" } : {}),
      });
      expect(report.body.checked).toMatchObject({ collections: 1, documents: distributed ? 8 : 7 });
      expect(await indexed(svc, c, "uncataloged")).toBeGreaterThan(0);
      expect(await blobs.exists(orphan)).toBe(true);
      // The whole service at once finds the same, and a token without the admin scope may not ask.
      const whole = await svc.request("POST", "/doctor");
      expect(whole.body.found).toEqual(expected);
      expect(whole.body.checked.collections).toBe(1);
      const refused = await svc.request("POST", "/doctor", { token: WRITER });
      expect(refused.status).toBe(403);

      // The command line: the same report, readable, and exit code 1 while disagreements remain.
      const env = { DOCSTORE_URL: svc.url, DOCSTORE_TOKEN: ADMIN };
      const cliReport = await runCli(["doctor", "-c", c], { env });
      expect(cliReport.code, cliReport.stderr).toBe(1);
      for (const kind of [
        "blob_missing",
        "index_missing",
        "index_mismatch",
        "index_stale",
        "index_orphan",
        "blob_orphan",
        "raw_copy_missing",
      ]) {
        expect(cliReport.stdout).toContain(kind);
      }
      expect(cliReport.stdout).toContain("run again with --repair");

      // Repair, from the command line.
      const repaired = await runCli(["--json", "doctor", "--repair"], { env });
      expect(repaired.code, repaired.stdout + repaired.stderr).toBe(0);
      const repair = JSON.parse(repaired.stdout);
      expect(repair.repaired).toEqual(expected);
      expect(repair.unrepaired).toBe(0);

      if (distributed) {
        // A worker that runs no recovery of its own: what it indexes now, the doctor queued.
        svc.env.RECOVERY_INTERVAL_S = "0";
        await svc.startWorker();
      }
      const settled = await until(async () => {
        const now = rows(svc, c);
        return [...now.values()].every((r) => r.status === "ready" || r.status === "failed") ? now : undefined;
      }, 120_000);
      expect(settled.get("gone")).toMatchObject({ status: "failed", error: expect.stringMatching(/raw content missing/) });
      expect(settled.get("failed")).toMatchObject({ status: "failed", error: "failed by hand" });
      expect(settled.has("uncataloged")).toBe(false);
      for (const id of ["keep-a", "keep-b", "rawgone", "unindexed", "fewer", ...(distributed ? ["lost"] : [])]) {
        expect(settled.get(id)?.status, id).toBe("ready");
        if (id !== "lost") expect(settled.get(id)!.chunks, id).toBe(before.get(id)!.chunks);
        expect(await indexed(svc, c, id), id).toBe(settled.get(id)!.chunks);
      }
      for (const id of ["gone", "uncataloged", "failed"]) expect(await indexed(svc, c, id), id).toBe(0);
      expect(await blobs.exists(orphan)).toBe(false);
      expect(await blobs.exists(fresh)).toBe(true);
      expect((await indexAudit(svc.dataDir)).duplicates).toEqual([]);
      const search = await svc.request("GET", "/get_relevant_documents", { query: { query: "pelicans", collection_names: c } });
      expect(search.body.results.map((h: { doc_id: string }) => h.doc_id)).toEqual(["unindexed"]);

      // A second run finds nothing left to repair; the raw copy nothing can restore is still named.
      const again = await runCli(["doctor"], { env });
      expect(again.code, again.stdout).toBe(0);
      const second = await svc.request("POST", "/doctor");
      expect(second.body.found).toEqual(Object.fromEntries(Object.keys(expected).map((k) => [k, 0])));
      expect(second.body.unrepaired).toBe(0);
      expect(second.body.unrepairable).toEqual({ raw_copy_missing: 1 });
    } finally {
      await blobs.close();
      await svc.stop();
      removeDir(svc.dataDir);
    }
  }, 300_000);
});
