/**
 * A fault of the distributed mode: Redis restarted empty (no persistence) while a load is being
 * indexed. Every job waiting in it is gone; the catalog (SQLite, CATALOG's default) still says
 * those documents are queued, and the workers' recovery (RECOVERY_INTERVAL_S) queues them again.
 */
import { describe, expect, it } from "vitest";
import { freePort, indexRows, RedisServer } from "@docstore/shared/testing";
import { catalogDocuments, removeDir, startService, until, type Service } from "./harness.ts";

async function statuses(svc: Service, collection: string) {
  const r = await svc.request("GET", "/get_list_of_collection");
  return r.body.collections.find((c: { name: string }) => c.name === collection) as
    | { documents: number; ready: number; pending: number; failed: number }
    | undefined;
}

describe("faults, distributed mode", () => {
  it("Redis restarted empty while a load is being indexed: every acknowledged document ends ready, indexed once", async () => {
    const redis = new RedisServer(await freePort());
    await redis.start();
    const svc = await startService({
      mode: "distributed",
      workers: 2,
      env: { REDIS_URL: redis.url, RECOVERY_INTERVAL_S: "2", WORKER_CONCURRENCY: "2", LOG_LEVEL: "info" },
    });
    const c = "restarted";
    const acknowledged = new Set<string>();
    const filler = Array.from({ length: 1500 }, (_, w) => `term${w % 211}`).join(" ");
    const refusals: number[] = [];
    /** Loads documents from..from+n-1: a 202 acknowledges them; anything else must be a 503 with Retry-After. */
    const loadBatch = async (from: number, n: number) => {
      const documents = Array.from({ length: n }, (_, j) => ({
        doc_id: `d${from + j}`,
        text: `doc ${from + j} has marker${from + j}. ${filler}`,
      }));
      const started = performance.now();
      const r = await svc.request("POST", "/load_texts_to_collection", { query: { collection_name: c }, json: { documents } });
      if (r.status === 202) for (const d of documents) acknowledged.add(d.doc_id);
      else {
        expect(r.status, JSON.stringify(r.body)).toBe(503);
        expect(r.headers.get("retry-after")).toBe("5");
        expect(r.body.detail).toMatch(/queue unavailable/);
        refusals.push(performance.now() - started);
      }
      return r.status;
    };
    try {
      for (let b = 0; b < 600; b += 200) expect(await loadBatch(b, 200)).toBe(202);
      await until(async () => ((await statuses(svc, c))?.ready ?? 0) > 20, 120_000);

      await redis.stop(); // killed: everything it held, the waiting jobs included, is gone
      const midway = await statuses(svc, c);
      expect(midway!.pending).toBeGreaterThan(0);
      // While it is down, loads are refused at once with 503 and Retry-After, and nothing of them is kept.
      for (let i = 0; i < 5; i++) expect(await loadBatch(1000 + 10 * i, 10)).toBe(503);
      const single = await svc.request("POST", "/load_text_to_collection", {
        query: { collection_name: c, doc_id: "during" },
        json: { text: "refused" },
      });
      expect([single.status, single.headers.get("retry-after")]).toEqual([503, "5"]);
      // Searches do not need Redis.
      expect((await svc.request("GET", "/get_relevant_documents", { query: { query: "marker1", collection_names: c } })).status).toBe(200);

      await redis.start(); // empty
      await until(async () => (await loadBatch(600, 50)) === 202, 30_000);

      // A guard against a hang, not a speed check: on a loaded 2-core machine this takes minutes.
      const settled = await until(async () => {
        const s = await statuses(svc, c);
        return s && s.pending === 0 ? s : undefined;
      }, 240_000);
      expect(settled).toEqual({ name: c, documents: acknowledged.size, ready: acknowledged.size, pending: 0, failed: 0 });

      const records = catalogDocuments(svc, c);
      expect(new Set(records.map((r) => r.doc_id))).toEqual(acknowledged);
      const rows = await indexRows(svc.dataDir, `collection = '${c}'`);
      const chunks = new Map<string, number>();
      const heads = new Map<string, number>();
      const ids = new Set<string>();
      for (const r of rows) {
        if (r.chunk >= 0) chunks.set(r.docId, (chunks.get(r.docId) ?? 0) + 1);
        if (r.head) heads.set(r.docId, (heads.get(r.docId) ?? 0) + 1);
        ids.add(r.id);
      }
      expect(ids.size, "no chunk twice").toBe(rows.length);
      for (const r of records) {
        expect(r.status).toBe("ready");
        expect(r.chunks).toBeGreaterThan(0);
        expect(chunks.get(r.doc_id), r.doc_id).toBe(r.chunks);
        expect(heads.get(r.doc_id), r.doc_id).toBe(1);
      }
      expect(new Set(heads.keys())).toEqual(acknowledged);
      for (const i of [0, 299, 599, 649]) {
        const r = await svc.request("GET", "/get_relevant_documents", { query: { query: `marker${i}`, collection_names: c, k: 5 } });
        expect(r.body.results.map((h: { doc_id: string }) => h.doc_id)).toEqual([`d${i}`]);
      }
      // The case this test is about did happen: jobs were lost, and the workers queued them again.
      const recovered = new Set([...svc.output.matchAll(/"docId":"(d\d+)"[^\n]*"msg":"queued a lost job again"/g)].map((m) => m[1])).size;
      expect(recovered).toBeGreaterThan(0);
      const pendingAtOutage = midway!.pending;
      console.log(
        `Redis restarted empty: ${acknowledged.size} documents acknowledged, ${pendingAtOutage} pending when it went down, ` +
          `${recovered} of them lost from the queue and queued again by the workers, 0 lost, 0 duplicated; ` +
          `${refusals.length} loads refused meanwhile, 503 in at most ${Math.max(...refusals).toFixed(0)} ms`,
      );
    } finally {
      await svc.stop();
      await redis.stop();
      removeDir(svc.dataDir);
    }
  }, 330_000);
});
