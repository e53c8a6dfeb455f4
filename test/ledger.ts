/**
 * What a fault test loaded and the service acknowledged (answered 2xx), and the audit every
 * fault test ends with (`auditCollection`): every acknowledged document settled (`ready`, or
 * `failed` with a reason), none lost, none extra, the catalog intact, the index without
 * duplicates and with the catalog's chunk count for each document, and each ready document
 * found by a search for its unique marker.
 */
import Database from "better-sqlite3";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { expect } from "vitest";
import { indexAudit } from "@docstore/shared/testing";
import { until, type Reply, type Service } from "./harness.ts";

export interface Counts {
  documents: number;
  ready: number;
  pending: number;
  failed: number;
}

/** Words no other document has, so that they compress and rank as real text would not repeat. */
function noise(words: number): string {
  return Array.from({ length: words }, () => randomBytes(5).toString("hex")).join(" ");
}

export class Ledger {
  readonly svc: Service;
  readonly collection: string;
  /** doc_id → its marker, for each document acknowledged. */
  readonly acknowledged = new Map<string, string>();
  #next = 0;

  constructor(svc: Service, collection: string) {
    this.svc = svc;
    this.collection = collection;
  }

  /** `n` new documents of about `words` words each, each with a marker of its own. */
  documents(n: number, words: number): { doc_id: string; text: string }[] {
    return Array.from({ length: n }, () => {
      const i = this.#next++;
      return { doc_id: `d${i}`, text: `document ${i} carries marker${i}q. ${noise(words)}` };
    });
  }

  /**
   * A bulk load; its documents are recorded when it is answered 2xx. A 503 is tried again after
   * its Retry-After, twice at most, as docstore's client does (the S3 server the distributed
   * mode runs on is slow to take many connections at once on a loaded machine).
   */
  async load(documents: { doc_id: string; text: string }[]): Promise<Reply> {
    let r: Reply;
    for (let attempt = 1; ; attempt++) {
      r = await this.svc.request("POST", "/load_texts_to_collection", { query: { collection_name: this.collection }, json: { documents } });
      if (r.status !== 503 || attempt === 3) break;
      await new Promise((resolve) => setTimeout(resolve, Number(r.headers.get("retry-after")) * 1000));
    }
    if (r.status >= 200 && r.status < 300) for (const d of documents) this.acknowledged.set(d.doc_id, markerOf(d.text));
    return r;
  }

  /** `batches` bulk loads of `n` new documents of about `words` words each, every one answered 202. */
  async loadAccepted(batches: number, n: number, words: number): Promise<void> {
    for (let b = 0; b < batches; b++) {
      const r = await this.load(this.documents(n, words));
      expect(r.status, JSON.stringify(r.body)).toBe(202);
    }
  }

  /** A file upload of `bytes` bytes (over 64 KiB, it is kept as a file in the fs blob store); recorded when answered 2xx. */
  async upload(bytes: number): Promise<Reply> {
    const [doc] = this.documents(1, Math.ceil(bytes / 11));
    const form = new FormData();
    form.append("file", new Blob([doc!.text], { type: "text/plain" }), `${doc!.doc_id}.txt`);
    const r = await this.svc.request("POST", "/load_document_to_collection", {
      query: { collection_name: this.collection, doc_id: doc!.doc_id },
      form,
    });
    if (r.status >= 200 && r.status < 300) this.acknowledged.set(doc!.doc_id, markerOf(doc!.text));
    return r;
  }

  async counts(): Promise<Counts> {
    const r = await this.svc.request("GET", "/get_list_of_collection");
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return (
      r.body.collections.find((c: { name: string }) => c.name === this.collection) ?? { documents: 0, ready: 0, pending: 0, failed: 0 }
    );
  }

  /** Finds the document by its marker: its doc_id alone, or what was found instead. */
  async search(docId: string): Promise<string[]> {
    const marker = this.acknowledged.get(docId)!;
    const r = await this.svc.request("GET", "/get_relevant_documents", {
      query: { query: marker, collection_names: this.collection, k: 5 },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.results.map((h: { doc_id: string }) => h.doc_id);
  }

  /** Waits (a guard against a hang, not a speed check) until no acknowledged document is queued or processing. */
  async settled(timeoutMs: number): Promise<Counts> {
    return until(async () => {
      const c = await this.counts();
      return c.pending === 0 && c.ready + c.failed === this.acknowledged.size ? c : undefined;
    }, timeoutMs);
  }

  /** The audit every fault test ends with (the service still running). */
  async audit(): Promise<Audited> {
    return auditCollection(this.svc, this.collection, {
      acknowledged: new Set(this.acknowledged.keys()),
      markerOf: (id) => this.acknowledged.get(id)!,
    });
  }
}

export interface Audited {
  acknowledged: number;
  ready: number;
  failed: number;
  /** Acknowledged documents the catalog does not hold. */
  lost: number;
  /** Chunks (collection, doc, chunk) the index holds more than once. */
  duplicated: number;
}

/**
 * The audit every fault test ends with, once nothing is pending (the service still running):
 * the catalog intact and holding exactly the acknowledged documents (and, of loads never
 * answered, whole ones only); each of them `ready`, or `failed` with a reason; the index without
 * duplicate chunks, holding each ready document once with the catalog's chunk count, nothing of
 * the others, and as many chunks and documents in all (every collection's) as the catalog counts; each ready document found by a
 * search for its marker (first, when the search is hybrid and dense neighbours may follow it).
 */
export async function auditCollection(
  svc: Service,
  collection: string,
  told: { acknowledged: ReadonlySet<string>; unanswered?: ReadonlySet<string>; markerOf: (docId: string) => string },
): Promise<Audited> {
  const catalog = new Database(path.join(svc.dataDir, "catalog.sqlite"), { readonly: true });
  let rows: { doc_id: string; status: string; chunks: number; error: string | null }[];
  let chunks: number;
  let readyInAll: number;
  try {
    expect(catalog.pragma("integrity_check")).toEqual([{ integrity_check: "ok" }]);
    rows = catalog.prepare("SELECT doc_id, status, chunks, error FROM documents WHERE collection = ?").all(collection) as typeof rows;
    chunks = (catalog.prepare("SELECT coalesce(sum(chunks), 0) AS n FROM documents").get() as { n: number }).n;
    readyInAll = (catalog.prepare("SELECT count(*) AS n FROM documents WHERE status = 'ready'").get() as { n: number }).n;
  } finally {
    catalog.close();
  }
  // Nothing acknowledged lost, nothing refused kept; of the loads never answered, only documents whose raw bytes are all there.
  const held = new Set(rows.map((r) => r.doc_id));
  const lost = [...told.acknowledged].filter((id) => !held.has(id));
  expect(lost, "acknowledged documents the catalog does not hold").toEqual([]);
  const extra = rows.filter((r) => !told.acknowledged.has(r.doc_id) && !told.unanswered?.has(r.doc_id)).map((r) => r.doc_id);
  expect(extra, "documents the catalog holds that no client was told were accepted").toEqual([]);
  for (const r of rows) {
    expect(["ready", "failed"], `${r.doc_id} is ${r.status}`).toContain(r.status);
    if (r.status === "failed") expect(r.error?.trim(), `${r.doc_id} failed without a reason`).toBeTruthy();
    else expect(r.chunks, r.doc_id).toBeGreaterThan(0);
    expect(r.error ?? "", `${r.doc_id} was stored without its raw bytes`).not.toMatch(/raw content missing/);
  }
  const index = await indexAudit(svc.dataDir);
  expect(index.duplicates).toEqual([]);
  expect(index.chunks).toBe(chunks);
  for (const r of rows) {
    const key = `${collection}/${r.doc_id}`;
    expect(index.chunksPerDocument.get(key) ?? 0, `chunks of ${key} in the index`).toBe(r.status === "ready" ? r.chunks : 0);
    expect(index.headsPerDocument.get(key) ?? 0, `versions of ${key} in the index`).toBe(r.status === "ready" ? 1 : 0);
  }
  const ready = rows.filter((r) => r.status === "ready").map((r) => r.doc_id);
  // Every collection's: the index holds nothing the catalog does not (of deleted documents or collections, say).
  expect(index.documents).toBe(readyInAll);
  const hybrid = svc.env.EMBEDDER === "openai";
  for (let i = 0; i < ready.length; i += 8) {
    const found = await Promise.all(
      ready.slice(i, i + 8).map(async (id) => {
        const r = await svc.request("GET", "/get_relevant_documents", {
          query: { query: told.markerOf(id), collection_names: collection, k: 5 },
        });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.warnings, `warnings of the search for ${id}`).toBeUndefined();
        return r.body.results.map((h: { doc_id: string }) => h.doc_id) as string[];
      }),
    );
    found.forEach((ids, j) => expect(hybrid ? ids.slice(0, 1) : ids, `search for the marker of ${ready[i + j]}`).toEqual([ready[i + j]]));
  }
  return {
    acknowledged: told.acknowledged.size,
    ready: ready.length,
    failed: rows.length - ready.length,
    lost: lost.length,
    duplicated: index.duplicates.length,
  };
}

function markerOf(text: string): string {
  return /marker\d+q/.exec(text)![0];
}

/** `promise`, or a failure naming `what` if it takes longer than `ms`: a guard against a hang, not a speed check. */
export async function promptly<T>(what: string, promise: Promise<T>, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
