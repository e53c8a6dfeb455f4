import { setTimeout as sleep } from "node:timers/promises";

export interface TailWaitOptions {
  /** Rows waiting for maintenance above which a search waits (0: never waits). */
  aboveRows: number;
  /** While rows are being added, the least tail a search waits for (the writers start a run at it). */
  whileAddingAbove: number;
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

const indexed = (s: Sample) => s.total - s.rows;

/**
 * For searches that scan every row outside the full-text index: those made while more rows are
 * listed as outside it than searchListedRows (lancedb-outside.ts; others scan only those rows).
 * Rows appended since LanceDB's full-text index was last updated are found by a flat scan that
 * every search repeats (tokenizing each row again). Right after a large load that tail is tens of
 * thousands of rows, and the searches that scan it also slow the maintenance run that would fold
 * it in (figures: docs/benchmarks.md). So a search that finds more than `aboveRows` rows waiting
 * waits for a maintenance run to fold them in (for `maxWaitMs` at most), then runs on the indexed
 * table. While rows are still arriving (a load goes on), it waits only for a tail of at least half
 * the indexed rows and `whileAddingAbove` rows: during a load, while someone searches, a run starts
 * once the tail reaches both (lancedb-maintenance-policy.ts), and such a run costs less than
 * scanning such a tail (a run costs about a quarter as much a row of the table as a scan a row of
 * the tail); a shorter tail is scanned at once. A run that leaves more than `aboveRows` rows
 * waiting (they came while it ran) does not end the wait: the one after it does. A wait that ran
 * out is not repeated until a run changes the indexed rows (maintenance may be failing, or done by
 * a process that stopped).
 * A run costs in proportion to the table (compaction rewrites it), so the longest wait grows with
 * the table beyond `maxWaitRows`: at a million rows a search that gave up at the default 30 s
 * scanned hundreds of thousands of rows beside the run.
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
  /** The indexed rows when a wait ran out: searches do not wait again until a run changes them. */
  #gaveUpAt: number | null = null;
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
    const { aboveRows, whileAddingAbove, maxWaitMs, maxWaitRows, pollMs } = this.#options;
    const first = await this.#sample(pollMs);
    if (first.rows <= aboveRows || indexed(first) === this.#gaveUpAt) return;
    const longest = (s: Sample) => maxWaitMs * Math.max(1, s.total / maxWaitRows);
    let deadline = Date.now() + longest(first);
    let now = first;
    let base = indexed(first);
    for (;;) {
      // Rows still arriving: no run is near for a shorter tail; it is scanned.
      if (this.#growing() && (now.rows * 2 < indexed(now) || now.rows < whileAddingAbove)) return;
      if (Date.now() >= deadline) {
        this.#gaveUpAt = indexed(now);
        return;
      }
      await sleep(pollMs);
      if (this.#stopped) return;
      now = await this.#sample(pollMs);
      if (now.rows <= aboveRows) return;
      // A run committed, and more than aboveRows rows still wait: those that came while it ran.
      // The run that follows folds them in (writers start one once writes pause); scanning them
      // meanwhile cost more than waiting for it (docs/benchmarks.md). The wait starts over.
      if (indexed(now) !== base) {
        base = indexed(now);
        deadline = Date.now() + longest(now);
      }
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
        if (this.#gaveUpAt !== null && indexed(sample) !== this.#gaveUpAt) this.#gaveUpAt = null;
        return sample;
      })
      .finally(() => (this.#reading = null));
    return this.#reading;
  }
}
