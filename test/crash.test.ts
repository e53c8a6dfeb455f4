import { describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import path from "node:path";
import { removeDir, startService, until } from "./harness.ts";

const N = 2000;

describe("crash recovery", () => {
  it("indexes every queued document exactly once after SIGKILL and restart", async () => {
    const first = await startService();
    const c = "crash";
    for (let batch = 0; batch < N / 1000; batch++) {
      const documents = Array.from({ length: 1000 }, (_, j) => {
        const i = batch * 1000 + j;
        return { doc_id: `r${i}`, text: `record ${i} carries the marker${i} token`, metadata: { priority: i } };
      });
      const r = await first.request("POST", "/load_texts_to_collection", { query: { collection_name: c }, json: { documents } });
      expect(r.status).toBe(202);
    }
    await first.stop("SIGKILL");

    // The scenario is real only if work was still pending when the process died.
    const file = path.join(first.dataDir, "docstore.sqlite");
    const before = new Database(file, { readonly: true });
    const pending = before.prepare("SELECT count(*) AS n FROM documents WHERE status IN ('queued', 'processing')").get() as { n: number };
    const accepted = before.prepare("SELECT count(*) AS n FROM documents").get() as { n: number };
    before.close();
    expect(accepted.n).toBe(N);
    expect(pending.n).toBeGreaterThan(0);

    const second = await startService({ dataDir: first.dataDir });
    await until(async () => {
      const ready = [];
      let cursor: string | undefined;
      do {
        const page = await second.request("GET", "/get_list_of_documents_names", { query: { collection_name: c, limit: 1000, cursor } });
        ready.push(...page.body.documents.filter((d: any) => d.status === "ready"));
        cursor = page.body.next_cursor ?? undefined;
      } while (cursor);
      return ready.length === N;
    }, 60_000);

    for (let i = 0; i < N; i += 7) {
      const r = await second.request("GET", "/get_relevant_documents", { query: { query: `marker${i}`, collection_names: c, k: 10 } });
      expect(r.body.results.map((h: any) => h.doc_id)).toEqual([`r${i}`]);
    }
    const db = new Database(file, { readonly: true });
    const chunks = db.prepare("SELECT count(*) AS n FROM chunks").get() as { n: number };
    const fts = db.prepare("SELECT count(*) AS n FROM chunks_fts").get() as { n: number };
    const dupes = db.prepare("SELECT doc, chunk_index FROM chunks GROUP BY doc, chunk_index HAVING count(*) > 1").all();
    const versions = db.prepare("SELECT DISTINCT version FROM documents").all();
    db.close();
    expect(chunks.n).toBe(N);
    expect(fts.n).toBe(N);
    expect(dupes).toEqual([]);
    expect(versions).toEqual([{ version: 1 }]);

    expect(await second.stop()).toBe(0);
    removeDir(second.dataDir);
  }, 120_000);
});

describe("limits", () => {
  it("answers 413 beyond MAX_UPLOAD_BYTES and keeps serving", async () => {
    const svc = await startService({ env: { MAX_UPLOAD_BYTES: "1024", MAX_BODY_BYTES: "2048" } });
    const form = new FormData();
    form.append("file", new Blob(["x".repeat(5000)], { type: "text/plain" }), "big.txt");
    const r = await svc.request("POST", "/load_document_to_collection", { query: { collection_name: "lim" }, form });
    expect(r.status).toBe(413);
    expect(r.body.detail).toBe("file exceeds the upload limit of 1024 bytes");
    const body = await svc.request("POST", "/load_text_to_collection", { query: { collection_name: "lim" }, json: { text: "y".repeat(5000) } });
    expect(body.status).toBe(413);
    expect((await svc.request("GET", "/healthz")).status).toBe(200);
    await svc.stop();
    removeDir(svc.dataDir);
  });
});
