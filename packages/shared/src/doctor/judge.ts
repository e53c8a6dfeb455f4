/**
 * What the doctor makes of one document: its catalog record beside what the index holds of it,
 * whether its raw copy is gone and whether its job is. Pure: doctor.ts gathers the facts, asks
 * here, and carries out the repairs.
 */
import type { DocumentRecord, IndexEntry } from "../ports.ts";

/** Each kind of disagreement, and what a repair does about it. */
export const DISAGREEMENTS = {
  blob_missing: "a document not ready, or not indexed whole, whose raw content is gone: marked failed, its indexed version removed",
  index_missing: "a ready document the index does not hold: queued for indexing again",
  index_mismatch:
    "a ready document indexed in another version or with other chunks than the catalog says: removed from the index and queued for indexing again",
  index_stale:
    "a version the index holds that the catalog does not make searchable (newer than the catalog's, or of a failed document): removed from the index",
  index_orphan: "a document the index holds and the catalog does not know: removed from the index",
  job_lost: "a queued or processing document whose job is in no queue (Redis restarted empty): its job queued again",
  blob_orphan: "a raw copy no document names, over an hour old: deleted",
} as const;

export type Disagreement = keyof typeof DISAGREEMENTS;

/** Found and reported, but nothing can repair it. */
export const UNREPAIRABLE = {
  raw_copy_missing:
    "a ready document indexed whole whose raw copy is gone: still searchable, but it cannot be indexed again (load it again to restore it)",
} as const;

export type Unrepairable = keyof typeof UNREPAIRABLE;

/** A repair step, in the order given. */
export type Step =
  | { do: "remove_version"; version: number }
  | { do: "mark_failed"; reason: string }
  | { do: "requeue" }
  | { do: "resubmit" };

export interface Finding {
  kind: Disagreement | Unrepairable;
  detail: string;
  steps: Step[];
}

export const MISSING_BLOB_REASON = "raw content missing from the blob store (found by docstore doctor)";

export interface Facts {
  record: DocumentRecord;
  /** What the index holds of the document; undefined: nothing. */
  entry: IndexEntry | undefined;
  /** True only when the raw copy was looked for and is not there. */
  blobGone: boolean;
  /** True only for a queued or processing document older than the grace whose job is in no queue. */
  jobLost: boolean;
}

export function judge({ record, entry, blobGone, jobLost }: Facts): Finding[] {
  const findings: Finding[] = [];
  const v = record.version;
  // The index shows a version only after the catalog made it current, and versions only grow
  // but through a delete or a rollback: one above the catalog's is left from before those.
  if (entry && entry.version > v) {
    findings.push({
      kind: "index_stale",
      detail: `the index holds version ${entry.version}, the catalog's is ${v}`,
      steps: [{ do: "remove_version", version: entry.version }],
    });
    entry = undefined;
  }
  const dropIndexed: Step[] = entry ? [{ do: "remove_version", version: entry.version }] : [];
  switch (record.status) {
    case "failed":
      if (entry)
        findings.push({
          kind: "index_stale",
          detail: `failed (${record.error ?? "no reason"}), yet version ${entry.version} is searchable`,
          steps: dropIndexed,
        });
      break;
    case "ready": {
      const whole = entry !== undefined && entry.version === v && entry.chunks === record.chunks;
      if (blobGone && whole)
        findings.push({
          kind: "raw_copy_missing",
          detail: `version ${v} is indexed whole, its raw copy ${record.blobKey} is gone`,
          steps: [],
        });
      else if (blobGone)
        findings.push({
          kind: "blob_missing",
          detail: `ready, its raw copy ${record.blobKey} is gone and ${described(entry, record)}`,
          steps: [{ do: "mark_failed", reason: MISSING_BLOB_REASON }, ...dropIndexed],
        });
      else if (!entry)
        findings.push({
          kind: "index_missing",
          detail: `ready with ${chunks(record.chunks)} in version ${v}, and the index holds none`,
          steps: [{ do: "requeue" }],
        });
      else if (!whole)
        findings.push({ kind: "index_mismatch", detail: `ready; ${described(entry, record)}`, steps: [...dropIndexed, { do: "requeue" }] });
      break;
    }
    case "queued":
    case "processing":
      if (blobGone)
        findings.push({
          kind: "blob_missing",
          detail: `${record.status}, its raw copy ${record.blobKey} is gone`,
          steps: [{ do: "mark_failed", reason: MISSING_BLOB_REASON }, ...dropIndexed],
        });
      else if (jobLost)
        findings.push({
          kind: "job_lost",
          detail: `${record.status} since ${record.updatedAt}, and no queue holds job ${record.jobId}`,
          steps: [{ do: "resubmit" }],
        });
      break;
  }
  return findings;
}

function described(entry: IndexEntry | undefined, record: DocumentRecord): string {
  if (!entry) return "the index holds none of it";
  return `the index holds version ${entry.version} with ${chunks(entry.chunks)}, the catalog says version ${record.version} with ${record.chunks}`;
}

export const chunks = (n: number) => `${n} chunk${n === 1 ? "" : "s"}`;
