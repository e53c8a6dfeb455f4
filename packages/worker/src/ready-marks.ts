import type { Logger } from "@docstore/shared";

/**
 * Documents written and not yet marked ready, each batch waiting for the index to say searches
 * find its rows at their speed (SearchIndex.whenSearchable: LanceDB's next maintenance run after a
 * large load), while the worker goes on with the next batches. Until then they stay `processing`.
 * The embedded worker uses it (its queue is the catalog): a process that dies before marking them
 * leaves them so, and the next start queues them again. A stop marks what waits at once
 * (`flush`): the rows are in the index's table, found by the scan of its tail.
 */
export class ReadyMarks {
  readonly #logger: Pick<Logger, "warn">;
  readonly #pending = new Set<Promise<void>>();
  #flush!: () => void;
  readonly #flushed = new Promise<void>((resolve) => (this.#flush = resolve));

  constructor(logger: Pick<Logger, "warn">) {
    this.#logger = logger;
  }

  /** Runs `mark` once `searchable` resolves (or a flush comes); never rejects. */
  after(searchable: Promise<void>, mark: () => Promise<unknown>): void {
    const done = Promise.race([searchable, this.#flushed])
      .then(mark)
      .then(
        () => {},
        (err: unknown) => this.#logger.warn({ err }, "documents written to the index not marked ready; they are indexed again later"),
      )
      .finally(() => this.#pending.delete(done));
    this.#pending.add(done);
  }

  /** Marks everything that waits now, and settles once those marks are made. */
  async flush(): Promise<void> {
    this.#flush();
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }
}
