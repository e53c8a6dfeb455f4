/**
 * `docstore doctor`: finds the documents whose catalog record, raw copy (blob) and chunks
 * (index) disagree, and with `repair` puts each right (judge.ts says what is wrong and what
 * fixes it). Built for collections of hundreds of thousands of documents: the catalog is read
 * a page at a time with the index's entries for that page, the index's documents a batch at a
 * time, the blobs as a stream; per collection only two compact sets of blob keys are held
 * (keys.ts, 8 bytes a key).
 *
 * It runs beside the service's traffic. What looks wrong is looked at again before anything is
 * reported or done (the index first, then the catalog: a version the index shows was current
 * in the catalog first), every repair is conditional on the version it was judged on, and
 * blobs are judged by the instant in their key, so that a load, delete or indexing in flight
 * is not taken for a disagreement.
 */
import type { BlobStore, Catalog, DocumentRecord, IndexEntry, JobQueue, SearchIndex } from "../ports.ts";
import type { Logger } from "../logger.ts";
import { NotFoundError } from "../errors.ts";
import { KeySet, blobKeyTime } from "./keys.ts";
import { DISAGREEMENTS, UNREPAIRABLE, chunks, judge, type Disagreement, type Finding, type Step, type Unrepairable } from "./judge.ts";

export { DISAGREEMENTS, UNREPAIRABLE, type Disagreement, type Unrepairable } from "./judge.ts";

export interface DoctorPorts {
  catalog: Catalog;
  index: SearchIndex;
  blobs: BlobStore;
  queue: JobQueue;
  logger?: Pick<Logger, "info" | "warn">;
}

export interface DoctorOptions {
  /** False: report only. */
  repair: boolean;
  /**
   * The collections to check; null: every one the catalog knows, and every document the index
   * holds (those of collections the catalog no longer knows included).
   */
  collections: readonly string[] | null;
  /** How long a queued or processing document must have gone without a job to count as lost. */
  lostAfterMs: number;
  /** How old a blob no document names must be to count as an orphan (default one hour). */
  orphanBlobAfterMs?: number;
  /** Documents per catalog page and per index batch (default 500). */
  batch?: number;
  /** Examples kept in the report (default 50); the counts cover everything. */
  maxExamples?: number;
}

export interface DoctorExample {
  kind: Disagreement | Unrepairable;
  collection: string;
  /** Null for a blob no document names. */
  docId: string | null;
  detail: string;
  /** What was done, or why nothing was. */
  action: string;
}

export interface DoctorReport {
  repair: boolean;
  checked: { collections: number; documents: number; indexDocuments: number; blobs: number };
  found: Record<Disagreement, number>;
  repaired: Record<Disagreement, number>;
  /** Disagreements found and not repaired (all of them, without `repair`). */
  unrepaired: number;
  unrepairable: Record<Unrepairable, number>;
  examples: DoctorExample[];
  /** Examples left out past `maxExamples`. */
  examplesOmitted: number;
  seconds: number;
}

const DEFAULT_ORPHAN_BLOB_AFTER_MS = 3600_000;
/** Repairs and look-ups of one page at once. */
const CONCURRENCY = 16;

const zero = <K extends string>(keys: Record<K, unknown>) => Object.fromEntries(Object.keys(keys).map((k) => [k, 0])) as Record<K, number>;

export async function runDoctor(ports: DoctorPorts, options: DoctorOptions): Promise<DoctorReport> {
  return new Doctor(ports, options).run();
}

class Doctor {
  readonly #ports: DoctorPorts;
  readonly #options: Required<DoctorOptions>;
  readonly #report: DoctorReport;
  readonly #started = Date.now();
  /** Set when the catalog holds no collection: a lost catalog, not an emptied one; nothing is removed then. */
  #catalogEmpty = false;

  constructor(ports: DoctorPorts, options: DoctorOptions) {
    this.#ports = ports;
    this.#options = { orphanBlobAfterMs: DEFAULT_ORPHAN_BLOB_AFTER_MS, batch: 500, maxExamples: 50, ...options };
    this.#report = {
      repair: options.repair,
      checked: { collections: 0, documents: 0, indexDocuments: 0, blobs: 0 },
      found: zero(DISAGREEMENTS),
      repaired: zero(DISAGREEMENTS),
      unrepaired: 0,
      unrepairable: zero(UNREPAIRABLE),
      examples: [],
      examplesOmitted: 0,
      seconds: 0,
    };
  }

  async run(): Promise<DoctorReport> {
    const known = (await this.#ports.catalog.listCollections()).map((c) => c.name);
    this.#catalogEmpty = known.length === 0;
    const wanted = this.#options.collections;
    const collections = wanted === null ? known : wanted.filter((c) => known.includes(c));
    for (const collection of collections) await this.#collection(collection);
    // Then what the index holds that no record names, of any collection asked for.
    for (const scope of wanted === null ? [null] : [...new Set(wanted)]) await this.#orphansInIndex(scope);
    const r = this.#report;
    r.checked.collections = wanted === null ? known.length : new Set(wanted).size;
    r.unrepaired = Object.entries(r.found).reduce((n, [kind, found]) => n + found - r.repaired[kind as Disagreement], 0);
    r.seconds = Math.round((Date.now() - this.#started) / 100) / 10;
    this.#ports.logger?.info({ found: r.found, repaired: r.repaired, unrepairable: r.unrepairable, checked: r.checked }, "doctor finished");
    return r;
  }

  async #collection(collection: string): Promise<void> {
    const { catalog, blobs } = this.#ports;
    const { batch } = this.#options;
    const listedAt = Date.now();
    const present = new KeySet();
    for await (const key of blobs.list(`${collection}/`)) {
      present.add(key);
      this.#report.checked.blobs++;
    }
    present.seal();
    const named = new KeySet();
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<Catalog["listDocuments"]>> = await catalog.listDocuments(collection, batch, cursor);
      cursor = page.next;
      const entries = await this.#entries(
        collection,
        page.items.map((d) => d.docId),
      );
      for (const record of page.items) named.add(record.blobKey);
      this.#report.checked.documents += page.items.length;
      await eachLimited(page.items, (record) => this.#document(record, entries.get(record.docId), present, listedAt));
    } while (cursor !== null);
    named.seal();
    await this.#orphanBlobs(collection, named, listedAt);
  }

  async #entries(collection: string, docIds: string[]): Promise<Map<string, IndexEntry>> {
    const entries = new Map<string, IndexEntry>();
    if (docIds.length === 0) return entries;
    for await (const found of this.#ports.index.inventory({ collection, docIds }, this.#options.batch))
      for (const e of found) entries.set(e.docId, e);
    return entries;
  }

  async #document(record: DocumentRecord, entry: IndexEntry | undefined, present: KeySet, listedAt: number): Promise<void> {
    if (judge(await this.#facts(record, entry, present, listedAt)).length === 0) return;
    // Something looks wrong: look again, the index first, so that what changed meanwhile (a
    // load, an indexing, a delete) is not taken for a disagreement.
    const { collection, docId } = record;
    const again = (await this.#entries(collection, [docId])).get(docId);
    const current = await this.#ports.catalog.get(collection, docId);
    if (!current) return; // deleted meanwhile: what the index still holds is the orphan pass's
    for (const finding of judge(await this.#facts(current, again, present, listedAt))) await this.#settle(current, finding);
  }

  async #facts(record: DocumentRecord, entry: IndexEntry | undefined, present: KeySet, listedAt: number) {
    return { record, entry, blobGone: await this.#blobGone(record, present, listedAt), jobLost: await this.#jobLost(record) };
  }

  /**
   * Absent from the listing and made before it began (a blob made since may not be listed):
   * then looked up by itself, to be sure.
   */
  async #blobGone(record: DocumentRecord, present: KeySet, listedAt: number): Promise<boolean> {
    if (record.status === "failed" || present.has(record.blobKey)) return false;
    const made = blobKeyTime(record.blobKey);
    if (made !== null && made >= listedAt) return false;
    try {
      await this.#ports.blobs.get(record.blobKey);
      return false;
    } catch (err) {
      if (err instanceof NotFoundError) return true;
      throw err;
    }
  }

  async #jobLost(record: DocumentRecord): Promise<boolean> {
    if (record.status !== "queued" && record.status !== "processing") return false;
    if (Date.now() - Date.parse(record.updatedAt) < this.#options.lostAfterMs) return false;
    return !(await this.#ports.queue.isPending(record.jobId));
  }

  /** Counts a finding and, with `repair`, carries out its steps; each step applies only to the version judged. */
  async #settle(record: DocumentRecord, finding: Finding): Promise<void> {
    const { kind } = finding;
    const r = this.#report;
    if (kind in UNREPAIRABLE) {
      r.unrepairable[kind as Unrepairable]++;
      this.#example(record.collection, record.docId, finding, "none: nothing can restore it");
      return;
    }
    r.found[kind as Disagreement]++;
    if (!this.#options.repair) {
      this.#example(record.collection, record.docId, finding, "none (report only)");
      return;
    }
    const done: string[] = [];
    for (const step of finding.steps) {
      const outcome = await this.#step(record, step);
      if (outcome === null) {
        this.#example(record.collection, record.docId, finding, `${[...done, "not repaired: the document changed meanwhile"].join(", ")}`);
        return;
      }
      done.push(outcome);
    }
    r.repaired[kind as Disagreement]++;
    this.#ports.logger?.info({ collection: record.collection, docId: record.docId, kind, action: done }, "doctor repaired a document");
    this.#example(record.collection, record.docId, finding, done.join(", "));
  }

  /** What the step did, or null when the version judged is no longer current. */
  async #step(record: DocumentRecord, step: Step): Promise<string | null> {
    const { catalog, index, queue } = this.#ports;
    const { collection, docId, version, jobId } = record;
    switch (step.do) {
      case "remove_version":
        await index.deleteDocument(collection, docId, step.version);
        return `removed version ${step.version} from the index`;
      case "mark_failed":
        return (await catalog.markFailed(collection, docId, version, step.reason)) ? "marked failed" : null;
      case "requeue":
        if (!(await catalog.markQueued(collection, docId, version))) return null;
        await queue.resubmit({ collection, docId, version, jobId });
        return "queued for indexing again";
      case "resubmit":
        return (await queue.resubmit({ collection, docId, version, jobId }))
          ? "its job queued again"
          : "a job with its id is pending again";
    }
  }

  async #orphansInIndex(collection: string | null): Promise<void> {
    const { catalog, index } = this.#ports;
    for await (const entries of index.inventory({ collection }, this.#options.batch)) {
      this.#report.checked.indexDocuments += entries.length;
      const records = await Promise.all(entries.map((e) => catalog.get(e.collection, e.docId)));
      await eachLimited(
        entries.filter((_, i) => records[i] === null),
        (e) => this.#orphan(e),
      );
    }
  }

  async #orphan(entry: IndexEntry): Promise<void> {
    const { collection, docId, version } = entry;
    // Looked up again: a document loaded since the batch was read is no orphan.
    if (await this.#ports.catalog.get(collection, docId)) return;
    const finding: Finding = {
      kind: "index_orphan",
      detail: `the index holds version ${version} with ${chunks(entry.chunks)}, the catalog has no such document`,
      steps: [],
    };
    this.#report.found.index_orphan++;
    if (!this.#options.repair) return this.#example(collection, docId, finding, "none (report only)");
    if (this.#catalogEmpty) {
      return this.#example(
        collection,
        docId,
        finding,
        "not removed: the catalog holds no collection at all, so it looks lost rather than emptied (restore it, or delete the collection)",
      );
    }
    await this.#ports.index.deleteDocument(collection, docId, version);
    this.#report.repaired.index_orphan++;
    this.#ports.logger?.info({ collection, docId, version, kind: "index_orphan" }, "doctor repaired a document");
    this.#example(collection, docId, finding, `removed version ${version} from the index`);
  }

  /** Blobs under the collection that no record named during the pass, made well before it. */
  async #orphanBlobs(collection: string, named: KeySet, listedAt: number): Promise<void> {
    const cutoff = listedAt - this.#options.orphanBlobAfterMs;
    const orphans: string[] = [];
    const flush = () => eachLimited(orphans.splice(0), (key) => this.#orphanBlob(collection, key));
    for await (const key of this.#ports.blobs.list(`${collection}/`)) {
      if (named.has(key)) continue;
      const made = blobKeyTime(key);
      if (made === null || made >= cutoff) continue;
      orphans.push(key);
      if (orphans.length >= this.#options.batch) await flush();
    }
    await flush();
  }

  async #orphanBlob(collection: string, key: string): Promise<void> {
    const made = new Date(blobKeyTime(key)!).toISOString();
    const finding: Finding = { kind: "blob_orphan", detail: `blob ${key}, made ${made}, is named by no document`, steps: [] };
    this.#report.found.blob_orphan++;
    if (!this.#options.repair) return this.#example(collection, null, finding, "none (report only)");
    await this.#ports.blobs.delete(key);
    this.#report.repaired.blob_orphan++;
    this.#ports.logger?.info({ collection, key, kind: "blob_orphan" }, "doctor deleted an orphan blob");
    this.#example(collection, null, finding, "deleted");
  }

  #example(collection: string, docId: string | null, finding: Finding, action: string): void {
    const r = this.#report;
    if (r.examples.length >= this.#options.maxExamples) r.examplesOmitted++;
    else r.examples.push({ kind: finding.kind, collection, docId, detail: finding.detail, action });
  }
}

/** Runs `work` over the items, CONCURRENCY at a time. */
async function eachLimited<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const run = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, run));
}
