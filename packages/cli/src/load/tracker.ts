/**
 * What a load has done so far: the counts the progress display and the summary show, failures,
 * and what is still being indexed. `sent`, `accepted` and `indexed` count this run's documents
 * only; what an earlier run of the same command loaded is `skipped` (already loaded), also while
 * this run waits for it to be indexed, so that accepted <= sent and indexed <= accepted always.
 */

export interface Failure {
  /** The item as messages name it: a path, or `file:line`. */
  source: string;
  doc_id?: string;
  /** `read`: the item could not be read; `rejected`: the service refused it; `indexing`: it was accepted and then failed. */
  stage: "read" | "rejected" | "indexing";
  status?: number;
  reason: string;
}

/** A document accepted and not yet seen indexed or failed. */
export interface Outstanding {
  key: string;
  label: string;
  docId: string;
  version: number;
  /** Accepted by an earlier run: counted in `skipped`, not in `accepted` or `indexed`. */
  earlier: boolean;
}

export class Tracker {
  readonly started = performance.now();
  /** Documents the sources hold (for a CSV file, an estimate until it is read). */
  total = 0;
  /** Not sent: an earlier run loaded them (the state file says so, or the service had them). */
  skipped = 0;
  sent = 0;
  sentBytes = 0;
  accepted = 0;
  indexed = 0;
  failed = 0;
  /** Of `failed`, those this run did not send: unreadable items, and earlier runs' documents whose indexing failed. */
  failedUnsent = 0;
  retries = 0;
  /** Documents of the collection ready or failed, as last counted; the first count is the baseline of `indexedEstimate`. */
  #collectionAtStart: number | undefined;
  #collectionNow = 0;
  /** Seconds from the start until everything was sent and accepted (or refused). */
  sendSeconds: number | undefined;
  readonly failures: Failure[] = [];
  /** By doc_id; the latest version accepted. */
  readonly outstanding = new Map<string, Outstanding[]>();

  set settledInCollection(n: number) {
    this.#collectionAtStart ??= n;
    this.#collectionNow = n;
  }

  /**
   * Indexed documents for the progress display between exact looks: what the collection
   * gained since the load started, within what is known (exact when the load is the
   * collection's only writer; the summary uses exact figures only).
   */
  indexedEstimate(): number {
    const failedIndexing = this.failures.filter((f) => f.stage === "indexing").length;
    const gained = this.#collectionNow - (this.#collectionAtStart ?? this.#collectionNow) - failedIndexing;
    return Math.min(this.accepted, Math.max(this.indexed, gained));
  }

  elapsed(): number {
    return (performance.now() - this.started) / 1000;
  }

  fail(failure: Failure, sentByThisRun = failure.stage !== "read") {
    this.failed++;
    if (!sentByThisRun) this.failedUnsent++;
    this.failures.push(failure);
  }

  /** Documents this run sent that were accepted or refused (`wait` false), or indexed or failed (`wait` true): what a rate counts. */
  settled(wait: boolean): number {
    return (wait ? this.indexed : this.accepted) + this.failed - this.failedUnsent;
  }

  expect(o: Outstanding) {
    const list = this.outstanding.get(o.docId) ?? [];
    list.push(o);
    this.outstanding.set(o.docId, list);
  }

  waiting(): number {
    let n = 0;
    for (const list of this.outstanding.values()) n += list.length;
    return n;
  }
}
