import { describe, expect, it } from "vitest";
import type { DocumentRecord, IndexEntry } from "../ports.ts";
import { judge, MISSING_BLOB_REASON, type Facts } from "./judge.ts";
import { KeySet, blobKeyTime, hash53 } from "./keys.ts";

const record = (over: Partial<DocumentRecord> = {}): DocumentRecord => ({
  collection: "c",
  docId: "d",
  version: 3,
  jobId: "0196b9d8-5c1e-7cc4-9a61-4f0f7d1e2a10",
  status: "ready",
  metadata: {},
  filename: null,
  contentType: "text/plain",
  blobKey: "c/0196b9d8/0196b9d8-5c1e-7cc4-9a61-4f0f7d1e2a10",
  size: 10,
  sha256: "0".repeat(64),
  chunks: 4,
  error: null,
  createdAt: "2025-05-06T09:12:44.087Z",
  updatedAt: "2025-05-06T09:12:44.087Z",
  ...over,
});
const entry = (version: number, chunks: number): IndexEntry => ({ collection: "c", docId: "d", version, chunks });
const facts = (over: Partial<Facts>): Facts => ({ record: record(), entry: entry(3, 4), blobGone: false, jobLost: false, ...over });
const kinds = (f: Facts) => judge(f).map((x) => [x.kind, x.steps.map((s) => ("version" in s ? `${s.do} ${s.version}` : s.do))]);

describe("judge", () => {
  it("finds nothing wrong with a ready document indexed whole, nor with a pending one whose job is there", () => {
    expect(judge(facts({}))).toEqual([]);
    for (const status of ["queued", "processing"] as const) {
      // The index still shows the version before: normal until the new one is indexed.
      expect(judge(facts({ record: record({ status, chunks: 0 }), entry: entry(2, 7) }))).toEqual([]);
      expect(judge(facts({ record: record({ status, chunks: 0 }), entry: undefined }))).toEqual([]);
    }
    expect(
      judge(facts({ record: record({ status: "failed", chunks: 0, error: "encrypted PDF" }), entry: undefined, blobGone: true })),
    ).toEqual([]);
  });

  it("re-queues a ready document the index lacks, or holds otherwise, after removing what it holds", () => {
    expect(kinds(facts({ entry: undefined }))).toEqual([["index_missing", ["requeue"]]]);
    expect(kinds(facts({ entry: entry(3, 3) }))).toEqual([["index_mismatch", ["remove_version 3", "requeue"]]]);
    expect(kinds(facts({ entry: entry(2, 4) }))).toEqual([["index_mismatch", ["remove_version 2", "requeue"]]]);
  });

  it("removes from the index a version newer than the catalog's, and a failed document's", () => {
    expect(kinds(facts({ entry: entry(5, 4) }))).toEqual([
      ["index_stale", ["remove_version 5"]],
      ["index_missing", ["requeue"]],
    ]);
    expect(kinds(facts({ record: record({ status: "queued" }), entry: entry(4, 1) }))).toEqual([["index_stale", ["remove_version 4"]]]);
    expect(kinds(facts({ record: record({ status: "failed", error: "x" }), entry: entry(3, 4) }))).toEqual([
      ["index_stale", ["remove_version 3"]],
    ]);
  });

  it("fails a document whose raw copy is gone unless it is indexed whole, which is only reported", () => {
    expect(kinds(facts({ blobGone: true }))).toEqual([["raw_copy_missing", []]]);
    expect(kinds(facts({ blobGone: true, entry: entry(3, 2) }))).toEqual([["blob_missing", ["mark_failed", "remove_version 3"]]]);
    expect(kinds(facts({ blobGone: true, entry: undefined }))).toEqual([["blob_missing", ["mark_failed"]]]);
    expect(kinds(facts({ record: record({ status: "queued" }), blobGone: true, jobLost: true, entry: entry(2, 4) }))).toEqual([
      ["blob_missing", ["mark_failed", "remove_version 2"]],
    ]);
    expect(judge(facts({ blobGone: true, entry: undefined }))[0]!.steps[0]).toEqual({ do: "mark_failed", reason: MISSING_BLOB_REASON });
  });

  it("queues a lost job again, and only a pending document's", () => {
    expect(kinds(facts({ record: record({ status: "processing" }), jobLost: true }))).toEqual([["job_lost", ["resubmit"]]]);
    expect(judge(facts({ jobLost: true }))).toEqual([]);
  });
});

describe("KeySet and blob key instants", () => {
  it("holds what was added, 8 bytes a key, and answers after sealing", () => {
    const set = new KeySet();
    const keys = Array.from({ length: 5000 }, (_, i) => `c/0196b9d8/key-${i}`);
    for (const k of keys.filter((_, i) => i % 2 === 0)) set.add(k);
    set.seal();
    expect(keys.filter((k) => set.has(k))).toEqual(keys.filter((_, i) => i % 2 === 0));
    expect(() => set.add("more")).toThrow(/sealed/);
    expect(() => new KeySet().has("x")).toThrow(/seal/);
    expect(new Set(keys.map(hash53)).size).toBe(keys.length);
    expect(keys.every((k) => Number.isSafeInteger(hash53(k)))).toBe(true);
  });

  it("reads the instant a raw copy was made from the UUIDv7 that names it, and nothing from other keys", () => {
    expect(blobKeyTime("kb/0196b9d8/0196b9d8-5c1e-7cc4-9a61-4f0f7d1e2a10")).toBe(Date.parse("2025-05-10T10:58:06.494Z"));
    expect(blobKeyTime("kb/x/0196b9d8-5c1e-4cc4-9a61-4f0f7d1e2a10")).toBeNull(); // a v4 UUID
    expect(blobKeyTime("kb/x/notes.txt")).toBeNull();
  });
});
