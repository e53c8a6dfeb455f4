/**
 * Maintenance of the chunk table: the run itself (compaction, the indexes brought up to date,
 * old versions removed) and its scheduling. When to run is decided by decideMaintenance
 * (lancedb-maintenance-policy.ts); this module keeps the counts it decides on, reads the facts
 * it asks for, and holds the timers.
 */
import type { OptimizeStats, Table } from "@lancedb/lancedb";
import { storageError } from "../storage-errors.ts";
import type { TableConnection } from "./lancedb-connection.ts";
import type { SearchDemand } from "./lancedb-demand.ts";
import {
  decideMaintenance,
  type MaintenancePolicy,
  type MaintenanceState,
  type RunKind,
  type Trigger,
} from "./lancedb-maintenance-policy.ts";
import type { LanceOptions } from "./lancedb-options.ts";
import { INDEX_PLACE, isCommitConflict, type SerialWrites } from "./lancedb-serial.ts";
import { rebuildTextIndex, TABLE_LAYOUT } from "./lancedb-table.ts";
import type { TailCount } from "./lancedb-tail.ts";

function readOr<T>(read: () => T, otherwise: T): T {
  try {
    return read();
  } catch {
    return otherwise;
  }
}

export interface MaintenanceParts {
  connection: TableConnection;
  writes: SerialWrites;
  demand: SearchDemand;
  /** Rows outside the full-text index, and the table's rows. */
  textIndexCount(): Promise<TailCount>;
  /**
   * The documents listed as outside the full-text index (lancedb-outside.ts): a run reads the
   * list's mark as it starts, and hands it to `folded` once it has ended, to clear what it folded in.
   */
  outside: { mark(): number; folded(mark: number): void };
  /** Called at each tick of the timer, before it looks for work. */
  onTick(): void;
}

export class Maintenance {
  readonly #parts: MaintenanceParts;
  readonly #options: LanceOptions;
  readonly #policy: MaintenancePolicy;
  #queue: Promise<unknown> = Promise.resolve();
  /** Commits since the last run started, and the rows they wrote. */
  #commits = 0;
  #rows = 0;
  #lastCommit = 0;
  /** When the versions the last run replaced can be removed (0: nothing waits). */
  #cleanupAfter = 0;
  /** Rows the table held as the last run started and as it ended. */
  #lastRun = { startRows: 0, endRows: 0 };
  /** Until when a run that a pause calls for on a short tail waits (restFactor). */
  #restUntil = 0;
  #running: Promise<unknown> | null = null;
  /**
   * A table of layout 1 only (see TABLE_LAYOUT): whether its full-text index may rank rows that a
   * compaction dropped (earlier runs may have left such rows), from opening one until a run
   * builds it again (the timer starts one at its next tick). Each run that compacts such a table
   * also builds it again, after its compaction.
   */
  #textIndexStale = false;
  /** Whether the last run failed (its failure was logged). */
  #failing = false;
  #timer: NodeJS.Timeout | null = null;
  #pauseTimer: NodeJS.Timeout | null = null;
  /** Runs started so far (a run's number), and who waits for one to end (runEnded). */
  #started = 0;
  /** The number of the last run that ended, or failed. */
  #ended = 0;
  #waiting: { after: number; resolve: (run: number | null) => void }[] = [];

  constructor(parts: MaintenanceParts, options: LanceOptions) {
    this.#parts = parts;
    this.#options = options;
    this.#policy = { ...options, pauseMs: Math.min(1_000, options.maintainEveryMs / 2) };
    parts.connection.opened.then(
      (opened) => (this.#textIndexStale = opened.layout < TABLE_LAYOUT),
      () => {},
    );
    if (options.maintainEveryMs > 0) {
      this.#timer = setInterval(() => {
        parts.onTick();
        void this.#look("tick");
      }, options.maintainEveryMs);
      this.#timer.unref();
    }
  }

  /** Told of each commit of this instance, with the rows it wrote. */
  committed(rows = 0): void {
    this.#lastCommit = Date.now();
    this.#commits += 1;
    this.#rows += rows;
    void this.#look("commit");
  }

  /**
   * Compacts fragments, brings the indexes up to date and removes old versions. Queries and
   * writes go on meanwhile: appends commit beside it; a write whose commit conflicts with its
   * compaction runs again (see SerialWrites), and so does the run. Its cost grows with the
   * table, so the rows written before the next run grow with it too (lastRun).
   */
  maintain(): Promise<OptimizeStats> {
    // One run at a time: two would conflict with each other.
    const run = this.#queue.then(() => this.#maintain());
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * Folds in the rows outside the full-text index once the timer looks, as after a write (a run
   * starts then if any wait), though this instance wrote none: rows left by a version that did
   * not list them.
   */
  foldInSoon(): void {
    this.#commits = Math.max(this.#commits, 1);
    void this.#look("commit");
  }

  /** Whether a run is under way. */
  get running(): boolean {
    return this.#started > this.#ended;
  }

  /** Runs started so far: the number the next run takes is one more. */
  get runsStarted(): number {
    return this.#started;
  }

  /**
   * Resolves with its number once a run numbered above `after` ends (a failed run does not
   * count), or with null after `withinMs`, once `signal` is aborted, at close, or at once without
   * a timer (maintenance only when asked: none may come).
   */
  runEnded(withinMs: number, after = 0, signal?: AbortSignal): Promise<number | null> {
    if (this.#timer === null || signal?.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const abort = () => waiter.resolve(null);
      const waiter = {
        after,
        resolve: (run: number | null) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", abort);
          this.#waiting = this.#waiting.filter((w) => w !== waiter);
          resolve(run);
        },
      };
      const timer = setTimeout(abort, Math.max(0, withinMs));
      timer.unref();
      signal?.addEventListener("abort", abort);
      this.#waiting.push(waiter);
    });
  }

  async #maintain(): Promise<OptimizeStats> {
    const run = ++this.#started;
    try {
      return await this.#fold(run);
    } finally {
      this.#ended = run;
    }
  }

  async #fold(run: number): Promise<OptimizeStats> {
    const { outside } = this.#parts;
    // Every document listed by now has its rows committed: this run folds them into the index.
    const mark = readOr(() => outside.mark(), 0);
    const stats = await this.#optimize();
    try {
      outside.folded(mark);
    } catch (err) {
      // They stay listed, and searches scan them: only slower. The next run clears them.
      this.#options.logger?.warn({ err }, "search index: the list of documents outside the full-text index not cleared");
    }
    for (const w of this.#waiting.filter((w) => w.after < run)) w.resolve(run);
    return stats;
  }

  async #optimize(): Promise<OptimizeStats> {
    const { connection, writes } = this.#parts;
    const started = Date.now();
    const wrote = this.#commits > 0;
    this.#commits = 0;
    this.#rows = 0;
    const before = await connection.with((table) => table.version());
    const startRows = await connection.with((table) => table.countRows());
    const optimize = (table: Table) => table.optimize({ cleanupOlderThan: new Date(Date.now() - this.#options.keepVersionsMs) });
    let stats: OptimizeStats | undefined;
    // Beside the writes first; a replacement or delete that touched the fragments it compacts
    // makes its commit fail, and after two such failures it runs between this instance's writes.
    for (let attempt = 1; stats === undefined; attempt++) {
      try {
        stats = attempt <= 2 ? await connection.with(optimize) : await writes.run(optimize);
      } catch (err) {
        if (attempt > 2 || !isCommitConflict(err)) throw err;
      }
    }
    const { layout } = await connection.opened;
    if (layout < TABLE_LAYOUT && (this.#textIndexStale || stats.compaction.fragmentsRemoved > 0)) {
      // Between the compaction's commit and this one, searches may come back short (layout 1 only).
      await writes.run(rebuildTextIndex);
      this.#textIndexStale = false;
      this.#options.logger?.info({ layout }, "search index: full-text index built again after a compaction (a table of an older layout)");
    }
    // What this run replaced, and committed, is kept for keepVersionsMs: one more run after that
    // removes it. That holds for a run after no write too: the one 10 s after a load's fold-in
    // merges the load's fragments, and their files (as large as the table) stayed until the
    // next write. A run that committed nothing leaves nothing to remove.
    const committed = (await connection.with((table) => table.version())) > before;
    this.#cleanupAfter = wrote || committed ? Date.now() + this.#options.keepVersionsMs : 0;
    this.#lastRun = { startRows, endRows: await connection.with((table) => table.countRows()) };
    const ended = Date.now();
    this.#restUntil = ended + this.#options.restFactor * (ended - started);
    return stats;
  }

  /** Asks decideMaintenance, reading the facts it asks for, and acts on its answer. */
  async #look(trigger: Trigger): Promise<void> {
    const facts: Pick<MaintenanceState, "unindexed" | "fragments" | "quiet"> = {};
    const searched = this.#parts.demand.recent();
    for (;;) {
      const decision = decideMaintenance(
        {
          trigger,
          now: Date.now(),
          running: this.#running !== null,
          textIndexStale: this.#textIndexStale,
          commits: this.#commits,
          rows: this.#rows,
          lastCommit: this.#lastCommit,
          searched,
          lastRun: this.#lastRun,
          cleanupAfter: this.#cleanupAfter,
          restUntil: this.#restUntil,
          ...facts,
        },
        this.#policy,
      );
      if ("ask" in decision) {
        await this.#read(decision.ask, facts);
        continue;
      }
      if (decision.lookAgainAt !== null) this.#lookAgainAt(decision.lookAgainAt);
      if (decision.run) await this.#start(decision.run, searched);
      return;
    }
  }

  async #read(
    fact: "unindexed" | "fragments" | "quiet",
    facts: Pick<MaintenanceState, "unindexed" | "fragments" | "quiet">,
  ): Promise<void> {
    const { connection, demand, textIndexCount } = this.#parts;
    if (fact === "quiet") {
      facts.quiet = demand.quietFor(this.#options.tidyWhenQuietMs);
      return;
    }
    try {
      if (fact === "unindexed") facts.unindexed = (await textIndexCount()).unindexed;
      else facts.fragments = (await connection.with((table) => table.stats())).fragmentStats.numFragments;
    } catch {
      facts[fact] = null; // not known: the policy says what then
    }
  }

  /**
   * Looks for work at `at` (once writes have paused), so that the end of a load is folded in
   * then rather than at the timer's next tick. Each commit moves it, so when it fires the writes
   * have paused. It does not look at Date.now() again: the timer's clock is not Date.now()'s,
   * and may count the pause whole a millisecond before Date.now() does, which left the end of a
   * load for the next tick.
   */
  #lookAgainAt(at: number): void {
    if (this.#timer === null) return; // no timer: maintenance only when asked
    if (this.#pauseTimer) clearTimeout(this.#pauseTimer);
    this.#pauseTimer = setTimeout(() => void this.#look("pause"), Math.max(0, at - Date.now()));
    this.#pauseTimer.unref();
  }

  async #start(run: RunKind, searched: boolean): Promise<void> {
    const started = Date.now();
    const written = { rows: this.#rows, commits: this.#commits, searched };
    this.#running = this.maintain()
      .then(
        (stats) => {
          this.#failing = false;
          this.#options.logger?.info({ stats, run, ...written, ms: Date.now() - started }, "search index maintained");
          // Writes committed during the run are folded in once they pause, as after any commit.
          void this.#look("ran");
        },
        (err: unknown) => {
          // What it was to fold in is still there (its counts were reset as it started): the timer
          // runs it again, once DATA_DIR has room again, say. Said once per run of failures; the
          // next success is logged.
          this.#commits = Math.max(this.#commits, 1);
          if (!this.#failing)
            this.#options.logger?.warn(
              { err: storageError(err, INDEX_PLACE) ?? err },
              "search index maintenance failed; the timer retries it",
            );
          this.#failing = true;
        },
      )
      .finally(() => {
        this.#running = null;
      });
    await this.#running;
  }

  /** Stops the timers; settles once the run under way, if any, has ended. */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    if (this.#pauseTimer) clearTimeout(this.#pauseTimer);
    this.#timer = null;
    await this.#running;
    for (const w of [...this.#waiting]) w.resolve(null);
  }
}
