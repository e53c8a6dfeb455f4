import { describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import path from "node:path";
import { removeDir, startService, until } from "./harness.ts";
import { indexAudit, indexCounts } from "@docstore/shared/testing";

// The worker claims up to 1,024 documents a batch, a few batches at a time: eight batches leave a
// window of several commits in which to kill it with some documents written to the index and
// none or some of them marked ready (marks wait for a maintenance run: they are indexed again).
const N = 8000;
const BATCH = 500;

describe("crash recovery", () => {
  it("indexes every queued document exactly once after SIGKILL and restart", async () => {
    // 1. Accept documents with no worker running, then die: everything is queued.
    const first = await startService({ env: { EMBEDDED_WORKER: "false" } });
    const c = "crash";
    const filler = Array.from({ length: 600 }, (_, w) => `word${w % 97}`).join(" ");
    for (let batch = 0; batch < N / BATCH; batch++) {
      const documents = Array.from({ length: BATCH }, (_, j) => {
        const i = batch * BATCH + j;
        return { doc_id: `r${i}`, text: `record ${i} carries the marker${i} token. ${filler}`, metadata: { priority: i } };
      });
      const r = await first.request("POST", "/load_texts_to_collection", { query: { collection_name: c }, json: { documents } });
      expect(r.status).toBe(202);
    }
    await first.kill();
    const file = path.join(first.dataDir, "catalog.sqlite");
    expect(counts(file)).toEqual({ total: N, pending: N, ready: 0 });

    // 2. Start with the worker and kill it again in the middle of indexing.
    const second = await startService({ dataDir: first.dataDir });
    await until(async () => (await indexCounts(second.dataDir).catch(() => ({ rows: 0 }))).rows > 0);
    await second.kill();
    const midway = counts(file);
    expect(midway.pending).toBeGreaterThan(0);
    expect((await indexCounts(first.dataDir)).rows).toBeGreaterThan(0);

    // 3. Restart: everything ends ready, each document indexed exactly once.
    const third = await startService({ dataDir: first.dataDir });
    await until(async () => {
      const r = await third.request("GET", "/get_list_of_collection");
      return r.body.collections[0]?.ready === N;
    }, 180_000); // a guard against a hang, not a speed check
    for (let i = 0; i < N; i += 29) {
      const r = await third.request("GET", "/get_relevant_documents", { query: { query: `marker${i}`, collection_names: c, k: 10 } });
      expect(r.body.results.map((h: any) => h.doc_id)).toEqual([`r${i}`]);
    }
    const index = await indexAudit(third.dataDir);
    const catalog = new Database(file, { readonly: true });
    const versions = catalog.prepare("SELECT DISTINCT version FROM documents").all();
    const expected = catalog.prepare("SELECT sum(chunks) AS n FROM documents").get() as { n: number };
    catalog.close();
    expect(expected.n).toBeGreaterThan(N);
    expect(index.chunks).toBe(expected.n);
    expect(index.documents).toBe(N);
    expect(index.duplicates).toEqual([]);
    expect(versions).toEqual([{ version: 1 }]);

    expect(await third.stop()).toBe(0);
    removeDir(third.dataDir);
  }, 300_000);
});

function counts(file: string) {
  const db = new Database(file, { readonly: true });
  const row = db
    .prepare(
      `SELECT count(*) AS total, coalesce(sum(status IN ('queued', 'processing')), 0) AS pending,
         coalesce(sum(status = 'ready'), 0) AS ready FROM documents`,
    )
    .get() as { total: number; pending: number; ready: number };
  db.close();
  return row;
}

describe("limits", () => {
  it("answers 413 beyond MAX_UPLOAD_BYTES and keeps serving", async () => {
    const svc = await startService({ env: { MAX_UPLOAD_BYTES: "1024", MAX_BODY_BYTES: "2048" } });
    const form = new FormData();
    form.append("file", new Blob(["x".repeat(5000)], { type: "text/plain" }), "big.txt");
    const r = await svc.request("POST", "/load_document_to_collection", { query: { collection_name: "lim" }, form });
    expect(r.status).toBe(413);
    expect(r.body.detail).toMatch(
      /^file: received a file larger than 1024 bytes \(a request of \d+ bytes\); accepted: at most 1024 bytes \(the server's MAX_UPLOAD_BYTES\)$/,
    );
    const body = await svc.request("POST", "/load_text_to_collection", {
      query: { collection_name: "lim" },
      json: { text: "y".repeat(5000) },
    });
    expect(body.status).toBe(413);
    expect(body.body.detail).toMatch(/^body: received 5011 bytes; accepted: a body of at most 2048 bytes \(the server's MAX_BODY_BYTES;/);
    expect((await svc.request("GET", "/healthz")).status).toBe(200);
    await svc.stop();
    removeDir(svc.dataDir);
  });
});
