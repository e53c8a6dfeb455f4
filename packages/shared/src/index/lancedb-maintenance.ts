/**
 * Maintenance of the chunk table: the run itself (compaction, the indexes brought up to date,
 * old versions removed) and its scheduling: the counts it is decided on, and the timers.
 */
import type { OptimizeStats, Table } from "@lancedb/lancedb";
import { storageError } from "../storage-errors.ts";
import type { TableConnection } from "./lancedb-connection.ts";
import type { SearchDemand } from "./lancedb-demand.ts";
import type { LanceOptions } from "./lancedb-options.ts";
import { INDEX_PLACE, isCommitConflict, type SerialWrites } from "./lancedb-serial.ts";
import { rebuildTextIndex, TABLE_LAYOUT } from "./lancedb-table.ts";
import type { TailCount } from "./lancedb-tail.ts";

/**
 * While nobody searches, rows a load may write before a run, in maintainAfterRows. A run during
 * a load of 200,000 documents (at 100,000 rows) made them ready 20% later, and the first search
 * after it came no sooner: its compaction was done again at the load's end (bench:scale).
 */
const QUIET_ROWS_FACTOR = 15;

export interface MaintenanceParts {
  connection: TableConnection;
  writes: SerialWrites;
  demand: SearchDemand;
  /** Rows outside the full-text index, and the table's rows. */
  textIndexCount(): Promise<TailCount>;
  /** Called at each tick of the timer, before it looks for work. */
  onTick(): void;
}

export class Maintenance {
  readonly #parts: MaintenanceParts;
  readonly #options: LanceOptions;
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

  constructor(parts: MaintenanceParts, options: LanceOptions) {
    this.#parts = parts;
    this.#options = options;
    parts.connection.opened.then((opened) => (this.#textIndexStale = opened.layout < TABLE_LAYOUT), () => {});
    if (options.maintainEveryMs > 0) {
      this.#timer = setInterval(() => {
        parts.onTick();
        void this.#maintainIfDue(true);
      }, options.maintainEveryMs);
      this.#timer.unref();
    }
  }

  /** Told of each commit of this instance, with the rows it wrote. */
  committed(rows = 0): void {
    this.#lastCommit = Date.now();
    this.#commits += 1;
    this.#rows += rows;
    void this.#maintainIfDue(false);
    this.#checkWhenPaused();
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

  async #maintain(): Promise<OptimizeStats> {
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

  /**
   * Whether a run with nothing new to fold in is due: the versions the last run replaced are old
   * enough to remove, and searches have paused (or paused long enough ago: tidyWithinMs), or the
   * run has nothing to merge. Such a run usually also merges the fragment the last run left with
   * the table's, which rewrites every row of a table under a million rows (LanceDB 0.39's
   * optimize() takes no compaction options) on the cores searches use.
   */
  async #tidyDue(): Promise<boolean> {
    if (this.#cleanupAfter === 0 || Date.now() < this.#cleanupAfter) return false;
    return this.#mayTidy(this.#cleanupAfter) || (await this.#mergesNothing());
  }

  /**
   * Whether the table is one fragment: a run then has nothing to merge, and does little more than
   * remove files (LanceDB rewrites a lone fragment only when a tenth of its rows are deleted). So
   * the run after the one that merged a load's fragments does not wait for the searches to pause
   * (up to tidyWithinMs more, with the table's old copy on disk meanwhile).
   */
  async #mergesNothing(): Promise<boolean> {
    try {
      return (await this.#parts.connection.with((table) => table.stats())).fragmentStats.numFragments <= 1;
    } catch {
      return false; // not known: wait as any tidying run does
    }
  }

  /** Whether a run that would only tidy, due since `since`, may start: searches paused, or tidyWithinMs has passed. */
  #mayTidy(since: number): boolean {
    return Date.now() >= since + this.#options.tidyWithinMs || this.#parts.demand.quietFor(this.#options.tidyWhenQuietMs);
  }

  /**
   * Whether the run that writes' pause calls for may start: at once for a tail of more than
   * restTailRows, else after the rest that followed the last run (restFactor). Commits made while
   * a run indexed are often in the index already (LanceDB's index update takes the fragments there
   * are when it starts, after the run's compaction); deletes add no rows. Then the run would only
   * tidy, and waits as a tidying run does, counted from the last commit. At a million documents
   * that run (a rewrite of the whole table) fell in the first searches after the load.
   */
  async #foldsIn(): Promise<boolean> {
    let unindexed: number;
    try {
      unindexed = (await this.#parts.textIndexCount()).unindexed;
    } catch {
      return true; // not known: run it
    }
    if (unindexed > this.#options.restTailRows) return true;
    if (Date.now() < this.#restUntil) return false;
    return unindexed !== 0 || this.#mayTidy(this.#lastCommit);
  }

  async #maintainIfDue(timer: boolean, paused = Date.now() - this.#lastCommit >= this.#pauseMs()): Promise<void> {
    // While someone searches, a run starts after maintainAfterRows rows, or half the table the
    // last run left once that is more. While nobody does (SearchDemand), only the first search
    // needs the rows outside the full-text index folded in, and each run compacts the whole table
    // (under a million rows), which the run at a load's end does again: rows may grow to as many
    // as the last run compacted, at least QUIET_ROWS_FACTOR × maintainAfterRows, and commits to
    // 10 × maintainAfterCommits. Rows written during a run count towards the next: the first
    // commit after it ends starts that one if they are enough.
    const { maintainAfterRows, maintainAfterCommits } = this.#options;
    const searched = this.#parts.demand.recent();
    const { startRows, endRows } = this.#lastRun;
    const afterRows = searched ? Math.max(maintainAfterRows, Math.floor(endRows / 2)) : Math.max(QUIET_ROWS_FACTOR * maintainAfterRows, startRows);
    const enoughWritten = this.#rows >= afterRows || this.#commits >= (searched ? 1 : 10) * maintainAfterCommits;
    // The timer folds in what a load left once writes pause; during a load, rows and commits decide.
    const due = (timer && this.#textIndexStale) || (this.#commits > 0 ? enoughWritten || (timer && paused && !this.#running && (await this.#foldsIn())) : timer && !this.#running && (await this.#tidyDue()));
    if (this.#running || !due) return;
    await this.#start(searched);
  }

  /** How long writes must pause before the timer folds in what they left. */
  #pauseMs(): number {
    return Math.min(1_000, this.#options.maintainEveryMs / 2);
  }

  /**
   * Looks for work once writes have paused for #pauseMs (again after each commit), so that
   * the end of a load is folded in then rather than at the timer's next tick (up to
   * maintainEveryMs later): searches right after a large load wait for that run.
   */
  #checkWhenPaused(): void {
    if (this.#timer === null) return; // no timer: maintenance only when asked
    if (this.#pauseTimer) clearTimeout(this.#pauseTimer);
    const wait = Math.max(0, this.#lastCommit + this.#pauseMs() - Date.now());
    // Each commit re-arms it, so when it fires the writes have paused. It does not look at
    // Date.now() again: the timer's clock is not Date.now()'s, and may count the pause whole a
    // millisecond before Date.now() does, which left the end of a load for the next tick.
    this.#pauseTimer = setTimeout(() => void this.#maintainIfDue(true, true), wait);
    this.#pauseTimer.unref();
  }

  async #start(searched: boolean): Promise<void> {
    const started = Date.now();
    const written = { rows: this.#rows, commits: this.#commits, searched };
    this.#running = this.maintain().then(
      (stats) => {
        this.#failing = false;
        this.#options.logger?.info({ stats, ...written, ms: Date.now() - started }, "search index maintained");
        // Writes committed during the run are folded in once they pause, as after any commit.
        if (this.#commits > 0) this.#checkWhenPaused();
      },
      (err: unknown) => {
        // What it was to fold in is still there (its counts were reset as it started): the timer
        // runs it again, once DATA_DIR has room again, say. Said once per run of failures; the
        // next success is logged.
        this.#commits = Math.max(this.#commits, 1);
        if (!this.#failing) this.#options.logger?.warn({ err: storageError(err, INDEX_PLACE) ?? err }, "search index maintenance failed; the timer retries it");
        this.#failing = true;
      },
    ).finally(() => {
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
  }
}
