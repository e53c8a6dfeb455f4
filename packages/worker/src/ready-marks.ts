import { setMaxListeners } from "node:events";
import type { Logger } from "@docstore/shared";

/**
 * Documents written and not yet marked ready, each batch waiting for the index to publish it
 * (SearchIndex.publish: LanceDB's next maintenance run after a large load), while the worker goes
 * on with the next batches. Until then they stay `processing`. The embedded worker uses it (its
 * queue is the catalog): a process that dies before marking them leaves them so, and the next
 * start queues them again. A stop publishes and marks what waits at once (`flush`).
 */
export class ReadyMarks {
  readonly #logger: Pick<Logger, "warn">;
  readonly #pending = new Set<Promise<void>>();
  /** Aborted by a flush: every publish resolves at once. */
  readonly #now = new AbortController();

  constructor(logger: Pick<Logger, "warn">) {
    this.#logger = logger;
    // Each batch that waits listens to it (a large load: hundreds at once), and stops at its end.
    setMaxListeners(0, this.#now.signal);
  }

  /** Runs `mark` once `publish` resolves (told to hurry by a flush); never rejects. */
  after(publish: (now: AbortSignal) => Promise<void>, mark: () => Promise<unknown>): void {
    const done = publish(this.#now.signal)
      .then(mark)
      .then(
        () => {},
        (err: unknown) => this.#logger.warn({ err }, "documents written to the index not marked ready; they are indexed again later"),
      )
      .finally(() => this.#pending.delete(done));
    this.#pending.add(done);
  }

  /** Publishes and marks everything that waits now, and settles once those marks are made. */
  async flush(): Promise<void> {
    this.#now.abort();
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }
}
