/**
 * The embedded index unavailable for a while, in the distributed mode: DATA_DIR/index is a
 * tmpfs of its own that the test remounts read-only while documents are being indexed, and
 * read-write again later. Loads are still accepted (they wait in the queue), searches and lists
 * go on, the worker waits the outage out without giving up on a document, and once the index is
 * writable everything acknowledged is indexed, once, without a restart.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { describeSkipped } from "@docstore/shared/testing";
import { startService, tempDataDir } from "./harness.ts";
import { Ledger, promptly } from "./ledger.ts";
import { TMPFS_SKIP, Tmpfs } from "./tmpfs.ts";

if (TMPFS_SKIP) describeSkipped("index read-only", TMPFS_SKIP);

describe.runIf(!TMPFS_SKIP)("index read-only, distributed mode", () => {
  it("accepts loads and serves reads while the index is read-only, and indexes everything once it is writable", async () => {
    const dataDir = tempDataDir();
    const index = Tmpfs.mount(path.join(dataDir, "index"), 256);
    const svc = await startService({ dataDir, mode: "distributed", workers: 1, env: { WORKER_CONCURRENCY: "8" } });
    const ledger = new Ledger(svc, "readonly");

    // Before: documents indexed; then more, still being indexed when the index turns read-only.
    await ledger.loadAccepted(4, 25, 200);
    await ledger.settled(60_000);
    await ledger.loadAccepted(8, 25, 800);
    await index.readOnly();
    const at = await ledger.counts();
    expect(at.pending).toBeGreaterThan(0);

    // While read-only: loads are accepted (they wait in the queue), reads go on.
    for (let i = 0; i < 3; i++) await promptly(`load ${i} while the index is read-only`, ledger.loadAccepted(1, 20, 200));
    expect(await ledger.search("d3")).toEqual(["d3"]);
    const status = await svc.request("GET", "/get_document_status", { query: { collection_name: "readonly", id_value: "d42" } });
    expect(status.body.status).toBe("ready");
    const names = await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: "readonly" } });
    expect(names.status).toBe(200);
    const ready = await svc.request("GET", "/readyz", { token: null });
    expect(ready.status).toBe(503);
    expect(ready.body.checks.index).toMatch(
      /^storage unavailable: index\/ under DATA_DIR cannot be written \(read-only file system, EROFS\)/,
    );
    expect(ready.body.checks.data_dir).toBe("ok");

    // The worker waits the outage out, spending no attempt on it (an attempt spent is logged
    // "ingestion job failed" with its reason), so however long it lasts, nothing ends failed.
    await new Promise((r) => setTimeout(r, 20_000));
    const during = await ledger.counts();
    expect(during.failed).toBe(0);
    expect(during.pending).toBeGreaterThan(0);
    expect(svc.output).toMatch(
      /"err":"storage unavailable: index\/ under DATA_DIR cannot be written[^"]*","msg":"ingestion job waits for storage"/,
    );
    expect(svc.output).not.toMatch(/storage unavailable[^\n]*"msg":"ingestion job failed"/);

    // Writable again: the same processes index everything that waited.
    index.readWrite();
    const settled = await ledger.settled(120_000);
    expect(settled.failed).toBe(0);
    await ledger.audit();
    const after = await svc.request("POST", "/load_text_to_collection", {
      query: { collection_name: "readonly", doc_id: "after", wait: "true" },
      json: { text: "loaded once the index was writable again, marker999999q" },
    });
    expect(after.body.status).toBe("ready");
    expect((await svc.request("GET", "/readyz", { token: null })).status).toBe(200);
    expect(await svc.stop()).toBe(0);
  }, 240_000);
});
