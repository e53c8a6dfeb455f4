/**
 * Waits until every accepted document is indexed or failed, polling the service: one status
 * request per document while few are left, the collection's list a page at a time while many
 * are. Each outcome goes to the state file, and each failure with the service's reason.
 */
import { ProblemError, type DocstoreClient } from "@docstore/client";
import type { LoadState } from "./state.ts";
import type { Outstanding, Tracker } from "./tracker.ts";

/** Up to this many documents left, each is asked for by id. */
const BY_ID = 64;
const PARALLEL = 8;
const MAX_INTERVAL_MS = 5000;
/** While documents are pending in the collection after everything was sent, its whole list is read this often. */
const FULL_EVERY_MS = 30_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Seen = { status: string; version: number; error?: string | null } | "missing";

async function inParallel<T>(items: T[], n: number, fn: (item: T) => Promise<void>) {
  let i = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (i < items.length) await fn(items[i++]!);
    }),
  );
}

export class Waiter {
  readonly #client: DocstoreClient;
  readonly #state: LoadState;
  readonly #tracker: Tracker;
  readonly #collection: string;

  constructor(client: DocstoreClient, state: LoadState, tracker: Tracker, collection: string) {
    this.#client = client;
    this.#state = state;
    this.#tracker = tracker;
    this.#collection = collection;
  }

  /** Polls until `sending` is over and nothing is outstanding; `stopped` ends it early. */
  async run(sendingDone: () => boolean, stopped: () => boolean, intervalMs = 500): Promise<void> {
    let lastFull = performance.now();
    while (!stopped()) {
      const finished = sendingDone();
      const t = this.#tracker;
      const started = performance.now();
      let lookMs = 0;
      if (t.outstanding.size > 0 && t.outstanding.size <= BY_ID) {
        await this.poll();
        lookMs = performance.now() - started;
      } else if (t.outstanding.size > 0) {
        // One cheap request a turn. The whole list is read when it can settle everything (the
        // collection has nothing pending) and, once all is sent, every 30 s: a collection that
        // others keep loading may never be without pending documents.
        const counts = await this.#counts();
        lookMs = performance.now() - started;
        t.settledInCollection = counts.settled;
        if (counts.pending === 0 || (finished && performance.now() - lastFull > FULL_EVERY_MS)) {
          await this.poll();
          lastFull = performance.now();
        }
      }
      if (finished && t.outstanding.size === 0) return;
      // Each look costs the service some time (and, where it limits requests, some of the
      // token's budget): at most a third of it goes to looking, and a long load is looked at
      // less often, so that seeing the end late costs at most about 5% of its time.
      const every = Math.min(MAX_INTERVAL_MS, Math.max(intervalMs, (t.elapsed() * 1000) / 20));
      await sleep(Math.max(every, 2 * lookMs));
    }
  }

  async #counts(): Promise<{ settled: number; pending: number }> {
    const c = (await this.#client.listCollections()).find((x) => x.name === this.#collection);
    return { settled: (c?.ready ?? 0) + (c?.failed ?? 0), pending: c?.pending ?? 0 };
  }

  /** One look at the outstanding documents. */
  async poll(): Promise<void> {
    const ids = [...this.#tracker.outstanding.keys()];
    const seen = new Map<string, Seen>();
    if (ids.length <= BY_ID) {
      await inParallel(ids, PARALLEL, async (id) => {
        try {
          const s = await this.#client.documentStatus(this.#collection, id);
          seen.set(id, { status: s.status, version: s.version, error: s.error });
        } catch (err) {
          if (err instanceof ProblemError && err.status === 404) seen.set(id, "missing");
          else throw err;
        }
      });
    } else {
      const wanted = new Set(ids);
      for await (const d of this.#client.documents(this.#collection)) {
        if (wanted.delete(d.doc_id)) seen.set(d.doc_id, { status: d.status, version: d.version, error: d.error });
      }
      for (const id of wanted) seen.set(id, "missing");
    }
    for (const [id, s] of seen) this.#settle(id, s);
  }

  #settle(docId: string, s: Seen) {
    const list = this.#tracker.outstanding.get(docId);
    if (!list) return;
    const t = this.#tracker;
    const settled: Outstanding[] = [];
    // An earlier run's document stays counted as already loaded, unless it failed.
    const failed = (o: Outstanding, reason: string) => {
      if (o.earlier) t.skipped--;
      t.fail({ source: o.label, doc_id: docId, stage: "indexing", reason }, !o.earlier);
    };
    for (const o of list) {
      if (s === "missing") failed(o, "deleted before it was indexed");
      else if (s.version < o.version || (s.status !== "ready" && s.status !== "failed")) continue;
      else if (s.status === "ready") {
        if (!o.earlier) t.indexed++;
      } else failed(o, s.error ?? "failed");
      settled.push(o);
      const status = s === "missing" ? "failed" : (s.status as "ready" | "failed");
      const error = s === "missing" ? "deleted before it was indexed" : s.error;
      this.#state.record([this.#state.done(o.key, docId, o.version, status, status === "failed" ? error : undefined)]);
    }
    const left = list.filter((o) => !settled.includes(o));
    if (left.length === 0) this.#tracker.outstanding.delete(docId);
    else this.#tracker.outstanding.set(docId, left);
  }
}
