import { setTimeout as sleep } from "node:timers/promises";

export interface TailWaitOptions {
  /** Rows waiting for maintenance above which a search waits (0: never waits). */
  aboveRows: number;
  /** The longest a search waits for a table of up to `maxWaitRows` rows; then it scans what is still waiting. */
  maxWaitMs: number;
  /** Beyond this many rows in the table, the longest wait grows in proportion (a run's cost grows with the table). */
  maxWaitRows: number;
  /** How often the count is read while a search waits. */
  pollMs?: number;
}

/** Rows the full-text index lacks, and the rows of the table. */
export interface TailCount {
  unindexed: number;
  total: number;
}

interface Sample {
  rows: number;
  total: number;
  at: number;
}

/**
 * Rows appended since LanceDB's full-text index was last updated are found by a flat scan that
 * every search repeats (tokenizing each row again: about 0.09 ms a row a search, bench:unindexed).
 * Right after a large load that tail is tens of thousands of rows, and the searches that scan it
 * also slow the maintenance run that would fold it in: eight searches at once took 21-22 s each
 * after a load of 200,000 documents. So a search that finds more than `aboveRows` rows waiting,
 * while none are being added, waits for maintenance to fold them in (for `maxWaitMs` at most),
 * then runs on the indexed table. While rows are still arriving (a load goes on), waiting would
 * not shorten the tail: the search scans at once, as it always did. A wait that ran out is not
 * repeated for the same tail (maintenance may be failing, or done by a process that stopped).
 * A run costs in proportion to the table (compaction rewrites it), so the longest wait grows with
 * the table beyond `maxWaitRows`: at a million rows a run took 23 s on 2 cores, and a search
 * that gave up at 30 s on a slower evening scanned hundreds of thousands of rows beside it.
 *
 * `count` reads the number of rows not in the full-text index and the table's (LanceDB's index
 * statistics: read from the table's manifest, well under a millisecond). Searches at once share
 * one reading.
 */
export class TailWait {
  readonly #count: () => Promise<TailCount>;
  readonly #options: Required<TailWaitOptions>;
  #last: Sample | null = null;
  #previous: Sample | null = null;
  #reading: Promise<Sample> | null = null;
  /** The tail a wait ran out on: searches do not wait again while it is unchanged. */
  #gaveUpOn: number | null = null;
  #stopped = false;

  constructor(count: () => Promise<TailCount>, options: TailWaitOptions) {
    this.#count = count;
    this.#options = { pollMs: 100, ...options };
  }

  /** Resolves when a search should run: at once, or once maintenance caught up, or after maxWaitMs. */
  async settle(): Promise<void> {
    if (this.#options.aboveRows <= 0 || this.#stopped) return;
    try {
      await this.#wait();
    } catch {
      // The count could not be read: the search goes on, and reports what is wrong if it fails too.
    }
  }

  async #wait(): Promise<void> {
    const { aboveRows, maxWaitMs, maxWaitRows, pollMs } = this.#options;
    let now = await this.#sample(pollMs);
    if (now.rows <= aboveRows || now.rows === this.#gaveUpOn) return;
    const deadline = Date.now() + maxWaitMs * Math.max(1, now.total / maxWaitRows);
    for (;;) {
      // Two readings apart in time tell whether rows are still arriving.
      if (this.#growing()) return;
      if (Date.now() >= deadline) {
        this.#gaveUpOn = now.rows;
        return;
      }
      await sleep(pollMs);
      if (this.#stopped) return;
      now = await this.#sample(pollMs);
      if (now.rows <= aboveRows) return;
    }
  }

  /** Ends every wait (the index is closing): searches go on at once. */
  stop(): void {
    this.#stopped = true;
  }

  /** Whether the last two readings, close in time, show rows added. */
  #growing(): boolean {
    const [a, b] = [this.#previous, this.#last];
    return a !== null && b !== null && b.at - a.at <= 10 * this.#options.pollMs && b.rows > a.rows;
  }

  /** A reading at most `maxAgeMs` old; concurrent callers share one. */
  #sample(maxAgeMs: number): Promise<Sample> {
    if (this.#last && Date.now() - this.#last.at < maxAgeMs) return Promise.resolve(this.#last);
    this.#reading ??= this.#count()
      .then(({ unindexed, total }) => {
        const sample = { rows: unindexed, total, at: Date.now() };
        this.#previous = this.#last;
        this.#last = sample;
        if (this.#gaveUpOn !== null && unindexed !== this.#gaveUpOn) this.#gaveUpOn = null;
        return sample;
      })
      .finally(() => (this.#reading = null));
    return this.#reading;
  }
}
