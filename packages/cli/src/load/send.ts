/**
 * Sends the items: texts in bulk requests (`--batch-size` texts, within a byte budget), files
 * one upload each, `--concurrency` requests at a time. Before each request the state file
 * records what is being sent; after it, what was accepted. An item sent before whose answer
 * was lost (a kill) is looked up on the service first: same bytes there means it arrived.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { v7 as uuidv7 } from "uuid";
import { ConnectionError, ProblemError, type DocstoreClient, type DocumentStatus, type LoadResult, type Metadata } from "@docstore/client";
import type { Item } from "./sources.ts";
import { sha256, type Hashes, type LoadState } from "./state.ts";
import type { Tracker } from "./tracker.ts";

export interface SendOptions {
  collection: string;
  concurrency: number;
  batchSize: number;
  /** Most bytes of text in one bulk request. */
  batchBytes: number;
}

interface Prepared {
  item: Item;
  docId: string;
  /** Sent as doc_id; false when the service takes it from metadata.sys_id. */
  explicit: boolean;
  hashes: Hashes;
  /** A file's bytes; a text is sent as it is. */
  data?: Uint8Array;
  bytes: number;
}

/** Texts are prepared while a batch is filled; a file is read and hashed by the worker that sends it. */
type Work = { texts: Prepared[] } | { file: Item };

/** Statuses after which nothing else can succeed: stop the load. */
const FATAL = new Set([401, 403]);
export class FatalError extends Error {
  /** The refused request's HTTP status, when one was refused. */
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}

const reason = (err: unknown) => (err instanceof ProblemError ? err.message : (err as Error).message);

export class Sender {
  readonly #client: DocstoreClient;
  readonly #state: LoadState;
  readonly #tracker: Tracker;
  readonly #opts: SendOptions;
  readonly #items: AsyncIterator<Item>;
  /** A file met while a text batch was being filled: the next work. */
  #pending: Item | null = null;
  /** Keys met in this run: a key met again (a doc_id repeated in a file) is always sent, so that the last one wins. */
  readonly #seen = new Set<string>();
  #taking: Promise<unknown> = Promise.resolve();
  #stopped = false;
  #read = 0;

  constructor(client: DocstoreClient, state: LoadState, tracker: Tracker, items: AsyncIterable<Item>, opts: SendOptions) {
    this.#client = client;
    this.#state = state;
    this.#tracker = tracker;
    this.#items = items[Symbol.asyncIterator]();
    this.#opts = opts;
  }

  /** Sends everything; resolves when all is sent, rejects with a FatalError or a ConnectionError. */
  async run(): Promise<void> {
    const worker = async () => {
      for (let work = await this.#take(); work && !this.#stopped; work = await this.#take()) {
        if ("texts" in work) await this.#sendTexts(work.texts);
        else {
          const p = await this.#prepare(work.file);
          if (p) await this.#sendFile(p);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: this.#opts.concurrency }, worker));
    } catch (err) {
      this.#stopped = true;
      throw err;
    }
    // Every item is read: the count replaces the estimate (a CSV cell may span lines).
    this.#tracker.total = this.#read;
  }

  /** Sends nothing more; requests in flight finish. */
  stop() {
    this.#stopped = true;
  }

  /** The next work, one caller at a time (the items are read in order). */
  #take(): Promise<Work | null> {
    const next = this.#taking.then(() => this.#fill());
    this.#taking = next.catch(() => {});
    return next;
  }

  async #fill(): Promise<Work | null> {
    const texts: Prepared[] = [];
    let bytes = 0;
    if (this.#pending) {
      const file = this.#pending;
      this.#pending = null;
      return { file };
    }
    while (texts.length < this.#opts.batchSize && !this.#stopped) {
      const { value: item, done } = await this.#items.next();
      if (done) break;
      this.#read++;
      if (item.path !== undefined && item.error === undefined) {
        if (texts.length === 0) return { file: item };
        this.#pending = item;
        break;
      }
      const p = await this.#prepare(item);
      if (!p) continue;
      texts.push(p);
      bytes += p.bytes;
      if (bytes >= this.#opts.batchBytes) break;
    }
    return texts.length > 0 ? { texts } : null;
  }

  /** Reads and hashes an item; null when it is not to be sent (unreadable, or loaded before). */
  async #prepare(item: Item): Promise<Prepared | null> {
    const t = this.#tracker;
    if (item.error !== undefined) {
      t.fail({ source: item.label, doc_id: item.docId, stage: "read", reason: item.error });
      return null;
    }
    let data: Uint8Array | undefined;
    try {
      if (item.path !== undefined) data = await readFile(item.path);
    } catch (err) {
      t.fail({ source: item.label, stage: "read", reason: (err as Error).message });
      return null;
    }
    const hashes = { sha: sha256(data ?? item.text!), meta: sha256(JSON.stringify(item.metadata)) };
    const bytes = data ? data.byteLength : Buffer.byteLength(item.text!);
    const repeated = this.#seen.has(item.key);
    this.#seen.add(item.key);
    const stored = this.#state.entries.get(item.key);
    const entry = repeated ? undefined : stored;
    const same = (h: Hashes | undefined) => h !== undefined && h.sha === hashes.sha && h.meta === hashes.meta;
    if (entry && same(entry.ok) && entry.done?.status !== "failed") {
      t.skipped++;
      if (!entry.done) t.expect({ key: item.key, label: item.label, docId: entry.docId, version: entry.ok!.version, earlier: true });
      return null;
    }
    const sysId = typeof item.metadata.sys_id === "string" ? item.metadata.sys_id : undefined;
    const docId = item.docId ?? sysId ?? item.defaultId ?? stored?.docId ?? uuidv7();
    const p: Prepared = { item, docId, explicit: item.docId !== undefined || sysId === undefined, hashes, data, bytes };
    if (entry && same(entry.sent) && (await this.#arrived(p))) return null;
    return p;
  }

  /** Whether an earlier, unanswered request for the same bytes reached the service; if so it counts as accepted. */
  async #arrived(p: Prepared): Promise<boolean> {
    let status: DocumentStatus;
    try {
      status = await this.#client.documentStatus(this.#opts.collection, p.docId);
    } catch (err) {
      if (err instanceof ProblemError && err.status === 404) return false;
      if (err instanceof ProblemError) throw new FatalError(`looking up ${p.docId}, sent before without an answer: ${err.message}`);
      throw err;
    }
    if (status.sha256 !== p.hashes.sha) return false;
    // Sent by an earlier run: already loaded, not accepted by this one.
    this.#state.record([this.#state.ok(p.item.key, p.docId, p.hashes, status.version)]);
    this.#tracker.skipped++;
    this.#tracker.expect({ key: p.item.key, label: p.item.label, docId: p.docId, version: status.version, earlier: true });
    return true;
  }

  #accepted(p: Prepared, version: number, lines = true) {
    if (lines) this.#state.record([this.#state.ok(p.item.key, p.docId, p.hashes, version)]);
    this.#tracker.accepted++;
    this.#tracker.expect({ key: p.item.key, label: p.item.label, docId: p.docId, version, earlier: false });
  }

  #sending(ps: Prepared[]) {
    this.#state.record(ps.map((p) => this.#state.sent(p.item.key, p.docId, p.hashes)));
    this.#tracker.sent += ps.length;
    for (const p of ps) this.#tracker.sentBytes += p.bytes;
  }

  #refused(p: Prepared, err: unknown) {
    if (err instanceof ConnectionError) throw err;
    if (err instanceof ProblemError && FATAL.has(err.status)) throw new FatalError(err.message, err.status);
    this.#tracker.fail({
      source: p.item.label,
      doc_id: p.docId,
      stage: "rejected",
      status: err instanceof ProblemError ? err.status : undefined,
      reason: reason(err),
    });
  }

  async #sendTexts(batch: Prepared[]) {
    this.#sending(batch);
    // One text alone goes to the single endpoint, whose messages name no position in a batch.
    if (batch.length === 1) return this.#sendText(batch[0]!);
    let results: LoadResult[];
    try {
      results = await this.#client.loadTexts(
        this.#opts.collection,
        batch.map((p) => ({ text: p.item.text!, metadata: p.item.metadata as Metadata, ...(p.explicit ? { doc_id: p.docId } : {}) })),
      );
    } catch (err) {
      // One bad document refuses the whole request: send them one by one, so that each gets its own answer.
      if (batch.length > 1 && err instanceof ProblemError && (err.status === 400 || err.status === 413)) {
        for (const p of batch) await this.#sendText(p);
        return;
      }
      for (const p of batch) this.#refused(p, err);
      return;
    }
    this.#state.record(results.map((r, i) => this.#state.ok(batch[i]!.item.key, r.doc_id, batch[i]!.hashes, r.version)));
    results.forEach((r, i) => this.#accepted({ ...batch[i]!, docId: r.doc_id }, r.version, false));
  }

  async #sendText(p: Prepared) {
    try {
      const r = await this.#client.loadText(this.#opts.collection, p.item.text!, {
        metadata: p.item.metadata as Metadata,
        docId: p.explicit ? p.docId : undefined,
      });
      this.#accepted({ ...p, docId: r.doc_id }, r.version);
    } catch (err) {
      this.#refused(p, err);
    }
  }

  async #sendFile(p: Prepared) {
    this.#sending([p]);
    try {
      const r = await this.#client.loadDocument(
        this.#opts.collection,
        { data: p.data!, filename: path.basename(p.item.path!) },
        { metadata: p.item.metadata as Metadata, docId: p.explicit ? p.docId : undefined },
      );
      this.#accepted({ ...p, docId: r.doc_id }, r.version);
    } catch (err) {
      this.#refused(p, err);
    }
  }
}
