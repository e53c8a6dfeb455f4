/**
 * DATA_DIR out of space, in both modes: DATA_DIR is a small tmpfs that the test fills while the
 * service runs, and grows again later. Loads that cannot be stored answer 507 with problem
 * details, promptly; searches, lists and statuses go on; what was acknowledged before is not
 * damaged, and what was waiting to be indexed is indexed once space returns, without a restart.
 */
import { describe, expect, it } from "vitest";
import { describeSkipped } from "@docstore/shared/testing";
import { startService, tempDataDir, until, type Mode, type Reply } from "./harness.ts";
import { Ledger, promptly } from "./ledger.ts";
import { TMPFS_SKIP, Tmpfs } from "./tmpfs.ts";

const MODES: { mode: Mode }[] = [{ mode: "embedded" }, { mode: "distributed" }];

/** A refusal for lack of space: 507 with problem details naming the cause, and when to come back. */
function expectInsufficientStorage(r: Reply) {
  expect(r.status, JSON.stringify(r.body)).toBe(507);
  expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(r.body).toMatchObject({ type: "about:blank", title: "Insufficient Storage", status: 507 });
  expect(r.body.detail).toMatch(/^no space left under DATA_DIR \(/);
  expect(r.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
}

if (TMPFS_SKIP) describeSkipped("DATA_DIR full", TMPFS_SKIP);

describe.runIf(!TMPFS_SKIP).each(MODES)("DATA_DIR full, $mode mode", ({ mode }) => {
  it("answers 507 to loads, serves reads, loses nothing, and recovers when space returns", async () => {
    const dataDir = tempDataDir();
    const disk = Tmpfs.mount(dataDir, 48);
    const svc = await startService({ dataDir, mode, ...(mode === "distributed" ? { workers: 1 } : {}) });
    const ledger = new Ledger(svc, "full");

    // Before: documents indexed, then more acknowledged that are still being indexed when space runs out.
    await ledger.loadAccepted(4, 25, 200);
    await ledger.settled(60_000);
    await ledger.loadAccepted(8, 25, 400);
    const filler = disk.fill();

    // While full: every load is stored (202) or refused with 507, never a 5xx of another kind,
    // each answered promptly; the first refusal comes within a few requests (the catalog's WAL
    // may still hold room for some).
    const refusals: Reply[] = [];
    for (let n = 0; n < 60 && refusals.length < 5; n++) {
      const r = await promptly(`load ${n} on a full disk`, ledger.load(ledger.documents(20, 800)));
      if (r.status !== 202) refusals.push(r);
    }
    expect(refusals.length).toBe(5);
    for (const r of refusals) expectInsufficientStorage(r);
    // An upload big enough for a file of its own in the fs blob store (to S3 in the distributed mode).
    const upload = await promptly("upload on a full disk", ledger.upload(200 * 1024));
    if (upload.status !== 202) expectInsufficientStorage(upload);

    // Reads go on: searches find what was indexed before, lists and statuses answer.
    expect(await ledger.search("d7")).toEqual(["d7"]);
    const status = await svc.request("GET", "/get_document_status", { query: { collection_name: "full", id_value: "d42" } });
    expect(status.status).toBe(200);
    expect(status.body.status).toBe("ready");
    const names = await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: "full" } });
    expect(names.status).toBe(200);
    const during = await ledger.counts();
    expect(during.failed).toBe(0);
    // Not ready while DATA_DIR cannot take a write; alive all along.
    const ready = await svc.request("GET", "/readyz", { token: null });
    expect(ready.status).toBe(503);
    expect(ready.body.checks.data_dir).toMatch(/^no space left under DATA_DIR/);
    expect((await svc.request("GET", "/healthz", { token: null })).status).toBe(200);

    // The worker has tried meanwhile and failed for lack of space: it keeps the documents to
    // retry, never gives up on them, and the processes stay up.
    await new Promise((r) => setTimeout(r, 5000));
    expect((await ledger.counts()).failed).toBe(0);
    expect(svc.proc.exitCode).toBeNull();
    expect(svc.workers.every((w) => w.exitCode === null)).toBe(true);

    // Space returns (the volume grown in place): the same processes take loads again and
    // index everything that waited.
    await filler.stop();
    disk.resize(256);
    await until(async () => (await ledger.load(ledger.documents(20, 200))).status === 202, 30_000);
    const waited = await svc.request("POST", "/load_text_to_collection", {
      query: { collection_name: "full", doc_id: "after", wait: "true" },
      json: { text: "loaded after space returned, marker999999q" },
    });
    expect(waited.body.status).toBe("ready");
    ledger.acknowledged.set("after", "marker999999q");
    const settled = await ledger.settled(120_000);
    expect(settled.failed).toBe(0);
    await ledger.audit();
    expect((await svc.request("GET", "/readyz", { token: null })).status).toBe(200);
    expect(await svc.stop()).toBe(0);
  }, 240_000);
});
