import { describe, expect, it } from "vitest";
import {
  QUIET_ROWS_FACTOR,
  decideMaintenance,
  type Decision,
  type MaintenancePolicy,
  type MaintenanceState,
} from "./lancedb-maintenance-policy.ts";

const policy: MaintenancePolicy = {
  maintainAfterRows: 20_000,
  maintainAfterCommits: 100,
  restTailRows: 500,
  tidyWithinMs: 120_000,
  pauseMs: 1_000,
};
const NOW = 1_000_000;
/** A table maintained once, at rest: nothing written since, nothing waiting to be removed. */
const state = (over: Partial<MaintenanceState>): MaintenanceState => ({
  trigger: "tick",
  now: NOW,
  running: false,
  textIndexStale: false,
  commits: 0,
  rows: 0,
  lastCommit: NOW - 60_000,
  searched: true,
  lastRun: { startRows: 100_000, endRows: 100_000 },
  cleanupAfter: 0,
  restUntil: 0,
  ...over,
});
/** What a decision comes to: the run (or "-" for none), or the fact it asks for. */
const shown = (d: Decision) => ("ask" in d ? `ask ${d.ask}` : (d.run ?? "-"));

describe("decideMaintenance", () => {
  // [case, state, decision]
  const table: [string, Partial<MaintenanceState>, string][] = [
    ["at rest: nothing", {}, "-"],
    ["a run under way: nothing, whatever waits", { running: true, commits: 500, rows: 1_000_000, textIndexStale: true }, "-"],
    ["a stale full-text index: rebuilt at the next tick", { textIndexStale: true }, "rebuild"],
    ["a stale full-text index: not on a commit", { textIndexStale: true, trigger: "commit", commits: 1, rows: 10, lastCommit: NOW }, "-"],
    // While someone searches: maintainAfterRows, or half the table the last run left.
    ["searched: half the table's rows written", { trigger: "commit", commits: 3, rows: 50_000, lastCommit: NOW }, "written"],
    ["searched: fewer rows", { trigger: "commit", commits: 3, rows: 49_999, lastCommit: NOW }, "-"],
    [
      "searched, small table: maintainAfterRows",
      { trigger: "commit", commits: 3, rows: 20_000, lastCommit: NOW, lastRun: { startRows: 0, endRows: 1_000 } },
      "written",
    ],
    ["searched: maintainAfterCommits commits", { trigger: "commit", commits: 100, rows: 100, lastCommit: NOW }, "written"],
    // While nobody searches: as many rows as the last run started with, at least QUIET_ROWS_FACTOR × maintainAfterRows, or 10 × the commits.
    [
      "quiet: the rows searched would run on are not enough",
      { searched: false, trigger: "commit", commits: 3, rows: 50_000, lastCommit: NOW },
      "-",
    ],
    [
      "quiet: QUIET_ROWS_FACTOR × maintainAfterRows",
      { searched: false, trigger: "commit", commits: 3, rows: QUIET_ROWS_FACTOR * 20_000, lastCommit: NOW },
      "written",
    ],
    [
      "quiet: the rows the last run started with",
      { searched: false, trigger: "commit", commits: 3, rows: 400_000, lastCommit: NOW, lastRun: { startRows: 500_000, endRows: 500_000 } },
      "-",
    ],
    [
      "quiet: 10 × maintainAfterCommits commits",
      { searched: false, trigger: "commit", commits: 1_000, rows: 1_000, lastCommit: NOW },
      "written",
    ],
    // Once writes pause, the timer folds in what they left.
    ["writes not paused yet: nothing", { commits: 3, rows: 300, lastCommit: NOW - 999 }, "-"],
    ["writes paused: how many rows wait is asked", { commits: 3, rows: 300, lastCommit: NOW - 1_000 }, "ask unindexed"],
    ["the pause timer: paused by its own clock", { trigger: "pause", commits: 3, rows: 300, lastCommit: NOW - 999 }, "ask unindexed"],
    [
      "paused, a long tail: at once, resting or not",
      { commits: 3, rows: 600, lastCommit: NOW - 1_000, unindexed: 501, restUntil: NOW + 5_000 },
      "fold-in",
    ],
    ["paused, the tail not known: run it", { commits: 3, rows: 600, lastCommit: NOW - 1_000, unindexed: null }, "fold-in"],
    ["paused, a short tail, resting: nothing", { commits: 3, rows: 300, lastCommit: NOW - 1_000, unindexed: 500, restUntil: NOW + 1 }, "-"],
    ["paused, a short tail, rested", { commits: 3, rows: 300, lastCommit: NOW - 1_000, unindexed: 500, restUntil: NOW }, "fold-in"],
    ["paused, nothing to fold in: searches asked about", { commits: 1, lastCommit: NOW - 1_000, unindexed: 0 }, "ask quiet"],
    ["paused, nothing to fold in, searches go on: waits", { commits: 1, lastCommit: NOW - 1_000, unindexed: 0, quiet: false }, "-"],
    ["paused, nothing to fold in, searches paused: tidies", { commits: 1, lastCommit: NOW - 1_000, unindexed: 0, quiet: true }, "tidy"],
    [
      "paused, nothing to fold in, tidyWithinMs after the last commit: tidies",
      { commits: 1, lastCommit: NOW - 120_000, unindexed: 0 },
      "tidy",
    ],
    // Nothing written since the last run: what it replaced is removed once old enough.
    ["nothing written, nothing to remove", { cleanupAfter: 0 }, "-"],
    ["nothing written, what was replaced not old enough", { cleanupAfter: NOW + 1 }, "-"],
    ["nothing written, old enough: searches asked about", { cleanupAfter: NOW }, "ask quiet"],
    ["nothing written, searches paused: tidies", { cleanupAfter: NOW, quiet: true }, "tidy"],
    ["nothing written, searches go on: fragments asked about", { cleanupAfter: NOW, quiet: false }, "ask fragments"],
    ["nothing written, searches go on, one fragment: tidies", { cleanupAfter: NOW, quiet: false, fragments: 1 }, "tidy"],
    ["nothing written, searches go on, fragments to merge: waits", { cleanupAfter: NOW, quiet: false, fragments: 2 }, "-"],
    ["nothing written, fragments not known: waits", { cleanupAfter: NOW, quiet: false, fragments: null }, "-"],
    ["nothing written, tidyWithinMs after it was due: tidies while searches go on", { cleanupAfter: NOW - 120_000 }, "tidy"],
    ["nothing written: never on a commit's or a run's end", { trigger: "ran", cleanupAfter: NOW - 120_000 }, "-"],
  ];
  for (const [name, over, expected] of table) {
    it(name, () => {
      expect(shown(decideMaintenance(state(over), policy))).toBe(expected);
    });
  }

  it("looks again once writes pause after a commit, or after a run that commits came during; else at the next tick", () => {
    const lookAgain = (over: Partial<MaintenanceState>) => {
      const d = decideMaintenance(state(over), policy);
      return "ask" in d ? "ask" : d.lookAgainAt;
    };
    expect(lookAgain({ trigger: "commit", commits: 1, lastCommit: NOW })).toBe(NOW + 1_000);
    expect(lookAgain({ trigger: "commit", commits: 100, lastCommit: NOW })).toBe(NOW + 1_000); // a run starts, and the pause is still looked for
    expect(lookAgain({ trigger: "commit", commits: 1, lastCommit: NOW, running: true })).toBe(NOW + 1_000);
    expect(lookAgain({ trigger: "ran", commits: 2, lastCommit: NOW - 200 })).toBe(NOW + 800);
    expect(lookAgain({ trigger: "ran", commits: 0 })).toBe(null);
    expect(lookAgain({ trigger: "tick", commits: 1, lastCommit: NOW - 10 })).toBe(null);
    expect(lookAgain({ trigger: "pause", commits: 1, lastCommit: NOW - 1_000, unindexed: 600 })).toBe(null);
  });
});
