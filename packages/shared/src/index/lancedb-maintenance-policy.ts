/**
 * When the chunk table is maintained (LanceSearchIndex.maintain, scheduled by
 * lancedb-maintenance.ts): a pure decision from what the scheduler knows and the clock. Facts
 * that cost a read of the table or of the search-demand file are asked for only when the
 * decision depends on them: the answer is then `{ ask }`, and the scheduler decides again with
 * the fact filled in.
 *
 * A run compacts fragments, folds the rows written since the last run into the indexes (until
 * then the full-text index finds them by a flat scan) and removes what an earlier run replaced.
 * Each run rewrites the whole table (under a million rows), so runs are spaced:
 * - while someone searches, after maintainAfterRows rows (or half the table the last run left,
 *   once that is more) or maintainAfterCommits commits;
 * - while nobody does, after as many rows as the last run started with, at least
 *   QUIET_ROWS_FACTOR × maintainAfterRows, or 10 × maintainAfterCommits commits: only the first
 *   search needs the rows folded in, and the run at a load's end compacts the table again;
 * - once writes pause: at once for a tail of more than restTailRows rows; a shorter tail waits
 *   for the rest after the last run (restFactor × its duration);
 * - a run with nothing new to fold in ("tidy") waits until searches pause (tidyWhenQuietMs) or
 *   tidyWithinMs has passed, unless the table is one fragment (it has nothing to merge).
 */

/**
 * While nobody searches, rows a load may write before a run, in maintainAfterRows: a run during a
 * load made it ready later, and no search sooner (docs/benchmarks.md).
 */
export const QUIET_ROWS_FACTOR = 15;

export interface MaintenancePolicy {
  maintainAfterRows: number;
  maintainAfterCommits: number;
  restTailRows: number;
  tidyWithinMs: number;
  /** How long writes must pause before what they left is folded in. */
  pauseMs: number;
}

/**
 * What asks for a decision: a commit, the timer's tick, the pause timer (armed at each commit,
 * so writes have paused when it fires), or the end of a run.
 */
export type Trigger = "commit" | "tick" | "pause" | "ran";

/** A fact read on demand: undefined until read; null when it could not be read. */
type OnDemand<T> = T | null | undefined;

export interface MaintenanceState {
  trigger: Trigger;
  now: number;
  /** A run is under way. */
  running: boolean;
  /** The full-text index may rank rows a compaction dropped (a table of layout 1): rebuilt by the next run. */
  textIndexStale: boolean;
  /** Commits since the last run started, and the rows they wrote. */
  commits: number;
  rows: number;
  lastCommit: number;
  /** Someone searched within maintainAfterSearchMs (SearchDemand.recent). */
  searched: boolean;
  /** Rows the table held as the last run started and as it ended. */
  lastRun: { startRows: number; endRows: number };
  /** When the versions the last run replaced can be removed (0: nothing waits). */
  cleanupAfter: number;
  /** Until when a run that a pause calls for on a short tail waits. */
  restUntil: number;
  /** Rows outside the full-text index. */
  unindexed?: OnDemand<number>;
  /** Fragments of the table. */
  fragments?: OnDemand<number>;
  /** No search has run for tidyWhenQuietMs (SearchDemand.quietFor). */
  quiet?: boolean | undefined;
}

/**
 * rebuild: the full-text index, stale; written: enough rows or commits; fold-in: a tail left by
 * writes that paused; tidy: nothing new to fold in, what the last run left is merged and removed.
 */
export type RunKind = "rebuild" | "written" | "fold-in" | "tidy";

export type Decision =
  | { ask: "unindexed" | "fragments" | "quiet" }
  | {
      run: RunKind | null;
      /** When to look again besides the timer's ticks: once writes have paused (the pause timer), or null. */
      lookAgainAt: number | null;
    };

export function decideMaintenance(s: MaintenanceState, policy: MaintenancePolicy): Decision {
  const run = (kind: RunKind | null): Decision => ({ run: kind, lookAgainAt: lookAgainAt(s, policy) });
  // After a run, rows written meanwhile count towards the next: the first commit after it starts that one if they are enough.
  if (s.trigger === "ran" || s.running) return run(null);
  const timer = s.trigger === "tick" || s.trigger === "pause";
  if (timer && s.textIndexStale) return run("rebuild");
  if (s.commits > 0) {
    if (enoughWritten(s, policy)) return run("written");
    const paused = s.trigger === "pause" || s.now - s.lastCommit >= policy.pauseMs;
    // During a load, rows and commits decide; once writes pause, the timer folds in what they left.
    if (!timer || !paused) return run(null);
    if (s.unindexed === undefined) return { ask: "unindexed" };
    if (s.unindexed === null || s.unindexed > policy.restTailRows) return run("fold-in"); // not known: run it
    if (s.now < s.restUntil) return run(null);
    if (s.unindexed !== 0) return run("fold-in");
    // Commits made while a run indexed are often in the index already, and deletes add no rows:
    // the run would only tidy, and waits as a tidying run does, counted from the last commit.
    return mayTidy(s, s.lastCommit, policy);
  }
  if (!timer || s.cleanupAfter === 0 || s.now < s.cleanupAfter) return run(null);
  const tidy = mayTidy(s, s.cleanupAfter, policy);
  if ("ask" in tidy || tidy.run) return tidy;
  // One fragment: the run has nothing to merge, and does little more than remove files.
  if (s.fragments === undefined) return { ask: "fragments" };
  return run(s.fragments !== null && s.fragments <= 1 ? "tidy" : null); // not known: wait as any tidying run does
}

function enoughWritten(s: MaintenanceState, { maintainAfterRows, maintainAfterCommits }: MaintenancePolicy): boolean {
  const { startRows, endRows } = s.lastRun;
  const afterRows = s.searched
    ? Math.max(maintainAfterRows, Math.floor(endRows / 2))
    : Math.max(QUIET_ROWS_FACTOR * maintainAfterRows, startRows);
  return s.rows >= afterRows || s.commits >= (s.searched ? 1 : 10) * maintainAfterCommits;
}

/** A run that would only tidy, due since `since`: once searches pause, or tidyWithinMs after. */
function mayTidy(s: MaintenanceState, since: number, policy: MaintenancePolicy): Decision {
  if (s.now < since + policy.tidyWithinMs && s.quiet === undefined) return { ask: "quiet" };
  return { run: s.now >= since + policy.tidyWithinMs || s.quiet ? "tidy" : null, lookAgainAt: lookAgainAt(s, policy) };
}

/**
 * Once writes pause, what they left is folded in without waiting for the timer's next tick (up to
 * maintainEveryMs later): searches right after a large load wait for that run. Each commit, and
 * the end of a run that commits came during, sets that moment again.
 */
function lookAgainAt(s: MaintenanceState, policy: MaintenancePolicy): number | null {
  return (s.trigger === "commit" || s.trigger === "ran") && s.commits > 0 ? s.lastCommit + policy.pauseMs : null;
}
