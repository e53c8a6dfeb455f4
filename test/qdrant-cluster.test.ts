/**
 * The distributed mode on a Qdrant cluster of three nodes (QDRANT_BIN, or the binary beside the
 * checkout), the collection in 3 shards of 2 replicas: one node is SIGKILLed in the middle of a
 * load while searches run, and started again later. Every acknowledged document ends ready,
 * once; searches keep answering (200, or 503 with Retry-After); the node's replicas become
 * active again.
 */
import { describe, expect, it } from "vitest";
import { qdrantIndexAudit, qdrantSource, describeSkipped, QdrantCluster, QDRANT_BIN_SKIP, QDRANT_SKIP } from "@docstore/shared/testing";
import { allSettled, collectionCounts, removeDir, startService, until } from "./harness.ts";

const source = qdrantSource();
const bin = source && "bin" in source ? source.bin : null;
if (!bin) describeSkipped("Qdrant cluster", source ? QDRANT_BIN_SKIP : QDRANT_SKIP);

describe.runIf(bin)("Qdrant cluster", () => {
  it("loses a node mid-load: every acknowledged document ready once, searches answering, replicas active again", async () => {
    const cluster = await QdrantCluster.start(bin!, 3);
    const [first, , victim] = cluster.nodes as [(typeof cluster.nodes)[0], unknown, (typeof cluster.nodes)[0]];
    const svc = await startService({
      mode: "distributed",
      index: "qdrant",
      qdrant: { url: first.url },
      workers: 1,
      env: { QDRANT_SHARDS: "3", QDRANT_REPLICATION_FACTOR: "2", WORKER_CONCURRENCY: "16", WORKER_BATCH_SIZE: "8" },
    });
    const c = "cluster";
    const acknowledged = new Set<string>();
    const searches = { ok: 0, unavailable: 0, other: [] as string[] };
    const loadBatch = async (from: number, n: number) => {
      const documents = Array.from({ length: n }, (_, j) => ({
        doc_id: `d${from + j}`,
        text: `document ${from + j} carries marker${from + j} and the word heron`,
      }));
      const r = await svc.request("POST", "/load_texts_to_collection", { query: { collection_name: c }, json: { documents } });
      if (r.status === 202) for (const d of documents) acknowledged.add(d.doc_id);
      else expect([r.status, r.headers.get("retry-after")], JSON.stringify(r.body)).toEqual([503, "5"]);
    };
    let searching = true;
    const search = async () => {
      while (searching) {
        const r = await svc.request("GET", "/get_relevant_documents", { query: { query: "heron", collection_names: c, k: 5 } });
        if (r.status === 200) searches.ok++;
        else if (r.status === 503 && r.headers.get("retry-after") === "5") searches.unavailable++;
        else searches.other.push(`${r.status} ${JSON.stringify(r.body)}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    };
    let searcher: Promise<void> = Promise.resolve();
    try {
      await loadBatch(0, 200);
      searcher = search(); // from when the collection exists
      await until(async () => ((await collectionCounts(svc, c))?.ready ?? 0) > 50, 60_000);
      await victim.kill();
      const whileDown = { ...searches };
      for (let i = 1; i <= 4; i++) await loadBatch(i * 200, 200);
      await new Promise((r) => setTimeout(r, 5000));
      const okWhileDown = searches.ok - whileDown.ok;
      // The writes found the node gone: the cluster marked its replicas dead.
      const collection = svc.env.QDRANT_COLLECTION!;
      await until(async () => ((await cluster.replicaStates(collection)).some((s) => s !== "Active") ? true : undefined), 30_000);
      await victim.start();
      const settled = await allSettled(svc, c, acknowledged.size, 180_000);
      expect(settled).toMatchObject({ documents: acknowledged.size, ready: acknowledged.size, failed: 0 });
      // The node's replicas come back: every replica of every shard active, as each node sees it.
      for (const node of cluster.nodes) {
        await until(async () => ((await cluster.replicaStates(collection, node)).every((s) => s === "Active") ? true : undefined), 120_000);
      }
      searching = false;
      await searcher;
      expect(searches.other).toEqual([]);
      expect(okWhileDown).toBeGreaterThan(0);
      const index = await qdrantIndexAudit(first.url, svc.env.QDRANT_COLLECTION!);
      expect(index.duplicates).toEqual([]);
      expect(index.orphans).toBe(0);
      expect(index.documents).toBe(acknowledged.size);
      expect(index.chunksPerDocument.size).toBe(acknowledged.size);
      const found = await svc.request("GET", "/get_relevant_documents", { query: { query: "marker777", collection_names: c, k: 3 } });
      expect(found.body.results.map((h: { doc_id: string }) => h.doc_id)).toEqual(acknowledged.has("d777") ? ["d777"] : []);
      console.log(
        `cluster: ${acknowledged.size} acknowledged and ready once; searches ${searches.ok} answered, ${searches.unavailable} 503 (${okWhileDown} answered in the 5 s after the kill)`,
      );
    } catch (err) {
      console.error(svc.output.slice(-3000), victim.output.slice(-2000));
      throw err;
    } finally {
      searching = false;
      await searcher.catch(() => {});
      await svc.stop();
      removeDir(svc.dataDir);
      await cluster.close();
    }
  }, 420_000);
});
