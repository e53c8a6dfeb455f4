/**
 * What the soak (soak.ts) is judged by: the audit of what the service holds against what it
 * acknowledged, the API's memory, and the figures as a report.
 */
import Database from "better-sqlite3";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import type { Service } from "./harness.ts";
import { auditCollection } from "./ledger.ts";
import { blobFilesDir, serviceS3 } from "./service-blobs.ts";
import type { SoakFigures, SoakLedger } from "./soak.ts";

export const rssMb = (pid: number | undefined) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
};

/**
 * The audit after the soak (the service still running): every acknowledged document not
 * deleted listed once, `ready` (or `failed` with a reason), indexed once with its chunk count
 * and found by its marker (ledger.ts); the deleted documents and the deleted collection gone
 * from the catalog, the index and the blob store; each collection's raw copies exactly those its
 * documents name. Then, after a pause, the API's memory (figures.apiRssMb.after).
 */
export async function auditSoak(svc: Service, ledger: SoakLedger, figures: SoakFigures): Promise<void> {
  const listed = await fetch(new URL("/get_list_of_collection", svc.url), { headers: { authorization: `Bearer ${svc.token}` } }).then(
    (r) => r.json() as Promise<{ collections: { name: string }[] }>,
  );
  expect(listed.collections.map((c) => c.name)).not.toContain(ledger.deletedCollection);
  for (const collection of ledger.collections) {
    if (collection === ledger.deletedCollection) continue;
    const markers = ledger.markers.get(collection)!;
    // auditCollection: nothing acknowledged lost, nothing else held (the deleted ones included), each once in the index.
    await auditCollection(svc, collection, { acknowledged: new Set(markers.keys()), markerOf: (id) => markers.get(id)! });
  }
  const catalog = new Database(path.join(svc.dataDir, "catalog.sqlite"), { readonly: true });
  try {
    const gone = catalog.prepare("SELECT count(*) AS n FROM documents WHERE collection = ?").get(ledger.deletedCollection) as { n: number };
    expect(gone.n, "documents of the deleted collection in the catalog").toBe(0);
    for (const collection of ledger.collections) {
      const named = (catalog.prepare("SELECT blob_key FROM documents WHERE collection = ?").all(collection) as { blob_key: string }[]).map(
        (r) => r.blob_key,
      );
      const held = await blobKeys(svc, `${collection}/`);
      expect(
        held.filter((k) => !named.includes(k)),
        `raw copies in ${collection} no document names`,
      ).toEqual([]);
      expect(
        named.filter((k) => !held.includes(k)),
        `raw copies missing in ${collection}`,
      ).toEqual([]);
    }
  } finally {
    catalog.close();
  }
  ledger.stopSampling?.();
  // 5 s after the audit, or later (240 s at most) until it has come down: the distributed mode's
  // API kept its peak for about 90 s, until V8 shrank its heap (RSS 930 -> 600 MB).
  const { before, peak } = figures.apiRssMb;
  await new Promise((r) => setTimeout(r, 5_000));
  for (let waited = 5; ; waited++) {
    figures.apiRssMb.after = rssMb(svc.proc.pid);
    if (figures.apiRssMb.after <= cameDown(before, peak) || waited >= 240) break;
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/** Come back down: below the peak by at least a twentieth of what the soak added. */
export function cameDown(before: number, peak: number): number {
  return peak - 0.05 * (peak - before);
}

/** The keys of the raw copies under `prefix`: files and small blobs in DATA_DIR, or objects on the S3 server. */
async function blobKeys(svc: Service, prefix: string): Promise<string[]> {
  if (svc.env.BLOB_STORE === "s3") {
    const s3 = serviceS3(svc);
    try {
      const keys: string[] = [];
      for await (const key of s3.list(prefix)) keys.push(key);
      return keys;
    } finally {
      await s3.close();
    }
  }
  const files = blobFilesDir(svc);
  const fromFiles = existsSync(files)
    ? (readdirSync(files, { recursive: true, withFileTypes: true }) as import("node:fs").Dirent[])
        .filter((e) => e.isFile())
        .map((e) => path.relative(files, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
        .filter((k) => k.startsWith(prefix))
    : [];
  const db = new Database(path.join(svc.dataDir, "catalog.sqlite"), { readonly: true });
  try {
    const small = (db.prepare("SELECT key FROM blobs WHERE substr(key, 1, ?) = ?").all(prefix.length, prefix) as { key: string }[]).map(
      (r) => r.key,
    );
    return [...fromFiles, ...small];
  } finally {
    db.close();
  }
}

/** The figures as lines of text: requests, errors, latency, memory. */
export function soakReport(mode: string, f: SoakFigures): string[] {
  const lines = [
    `${mode}: ${f.requests} requests in ${f.seconds.toFixed(0)} s, ${f.errors} unexpected answers (${f.serverErrors} 5xx or unanswered); ${f.documentsAcknowledged} documents acknowledged, ${f.documentsDeleted} deleted one by one, one collection deleted; all settled ${f.settleSeconds.toFixed(0)} s after the last load`,
  ];
  for (const [op, byStatus] of Object.entries(f.answers)) {
    const l = f.latencyMs[op]!;
    lines.push(
      `  ${op.padEnd(18)} ${Object.entries(byStatus)
        .map(([s, n]) => `${n} x ${s}`)
        .join(", ")
        .padEnd(22)} p50 ${l.p50.toFixed(0)} ms, p99 ${l.p99.toFixed(0)} ms, max ${l.max.toFixed(0)} ms`,
    );
  }
  lines.push(
    `  API RSS MB: ${f.apiRssMb.before.toFixed(0)} before, ${f.apiRssMb.peak.toFixed(0)} peak, ${f.apiRssMb.after.toFixed(0)} after` +
      (f.workerPeakRssMb.length ? `; workers' peak RSS MB: ${f.workerPeakRssMb.map((m) => m.toFixed(0)).join(", ")}` : ""),
  );
  return lines;
}
