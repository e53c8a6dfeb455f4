/** The options of LanceSearchIndex, and their defaults. Measurements behind the defaults: docs/benchmarks.md. */
import type { Logger } from "../logger.ts";
import { DEFAULT_FUSION, type HybridFusion } from "../search/fusion.ts";

export interface LanceIndexOptions {
  dir: string;
  /** Length of the dense vectors (the embedder's), or null to keep none. */
  dimensions: number | null;
  logger?: Pick<Logger, "info" | "warn" | "error">;
  /** How often the maintenance timer looks for work (default 2 s); 0 for no timer. */
  maintainEveryMs?: number;
  /**
   * Rows written after which maintenance starts without waiting for the timer (default
   * 20,000): rows the full-text index has not folded in yet are searched by a flat scan.
   */
  maintainAfterRows?: number;
  /**
   * How long after a search (in any process on the folder) maintainAfterRows and
   * maintainAfterCommits apply (default 60 s; Infinity for always). While nobody searches, a run
   * starts after as many rows as the table held when the last one started, at least 15 ×
   * maintainAfterRows, or after 10 × maintainAfterCommits commits, or once writes pause. See
   * SearchDemand.
   */
  maintainAfterSearchMs?: number;
  /**
   * Commits after which maintenance starts without waiting for the timer (default 100): each
   * leaves a fragment, and every query opens every fragment. Writers that commit a few documents
   * at a time (worker processes) reach this long before maintainAfterRows.
   */
  maintainAfterCommits?: number;
  /** How long replaced table versions stay readable for queries still on them (default 10 s). */
  keepVersionsMs?: number;
  /**
   * A run with nothing new to fold in waits until no search has run for tidyWhenQuietMs (default
   * 2 s; 0 for no wait), in any process on the folder (see SearchDemand), but no longer than
   * tidyWithinMs past the moment it was due (default 120 s). That is the run that removes what
   * the last one replaced, once keepVersionsMs has passed, and the one a pause in the writes calls
   * for when they left no row outside the full-text index (lancedb-maintenance-policy.ts): each merges
   * the fragment the last run left with the table's, which rewrites every row of a table under a
   * million rows. The first does not wait when the table is one fragment: it has nothing to
   * merge.
   */
  tidyWhenQuietMs?: number;
  tidyWithinMs?: number;
  /**
   * After a run, a run that writes' pause calls for on a tail of at most restTailRows rows (default
   * 500: every full-text search scans them meanwhile) waits restFactor times as long as that run
   * took (default 3; 0 for no rest). A run rewrites the table (under a million rows): without the
   * rest, a trickle of writes, each followed by a pause, kept the table being rewritten.
   */
  restFactor?: number;
  restTailRows?: number;
  /**
   * True when no other process or instance writes documents to this directory (the embedded
   * worker thread): then no other writer can race a version check, and that check is skipped.
   */
  soleWriter?: boolean;
  /** Memory for LanceDB's caches of index data and file metadata (default 256 MiB). */
  cacheBytes?: number;
  /** How hybrid searches fuse their two rankings (default DEFAULT_FUSION). */
  fusion?: HybridFusion;
  /**
   * Table versions (this process's commits and other processes') after which the table is
   * opened on a new connection (default 250; 0 for never): LanceDB keeps memory for each
   * version a connection has seen until it is closed.
   */
  renewAfterVersions?: number;
  /** How often the table's version is looked at for that (default 5 s). */
  renewCheckMs?: number;
  /**
   * Rows waiting for maintenance above which a search waits for it (default 10,000; 0 for never;
   * while rows are being added, only for a tail of half the indexed rows or more, and of at least
   * waitWhileAddingAbove rows: see TailWait), and for how long at most: waitForIndexMs
   * (default 30 s) for each waitForIndexRows rows of the table (default 500,000), at least
   * waitForIndexMs.
   */
  waitAboveUnindexed?: number;
  /**
   * The writers' maintainAfterRows (default its default, 20,000): while someone searches, a
   * writer starts a run once that many rows (and half the table it last left) wait, so a search
   * waiting for a run while rows are being added does not wait for a shorter tail.
   */
  waitWhileAddingAbove?: number;
  waitForIndexMs?: number;
  waitForIndexRows?: number;
  /**
   * Rows of the documents listed as outside the full-text index (lancedb-outside.ts) up to which a
   * full-text search reads the index and scans only those rows (default 5,000); past it, it scans
   * every row outside the index, as LanceDB does by default (waiting for maintenance first as
   * waitAboveUnindexed says).
   */
  searchListedRows?: number;
  /**
   * publish() lists documents at once while at most this many rows are outside the full-text
   * index, theirs included (default 500: a search restricted to the listed documents scans that
   * tail, and each listed row, in milliseconds); otherwise it waits for a maintenance run to fold
   * them into the index.
   */
  publishAtOnceRows?: number;
}

/** The options with every default filled in. */
export type LanceOptions = Required<Omit<LanceIndexOptions, "logger">> & Pick<LanceIndexOptions, "logger">;

export const MAINTAIN_AFTER_ROWS = 20_000;

export function withDefaults(options: LanceIndexOptions): LanceOptions {
  return {
    ...options,
    maintainEveryMs: options.maintainEveryMs ?? 2_000,
    maintainAfterRows: options.maintainAfterRows ?? MAINTAIN_AFTER_ROWS,
    maintainAfterSearchMs: options.maintainAfterSearchMs ?? 60_000,
    maintainAfterCommits: options.maintainAfterCommits ?? 100,
    keepVersionsMs: options.keepVersionsMs ?? 10_000,
    tidyWhenQuietMs: options.tidyWhenQuietMs ?? 2_000,
    tidyWithinMs: options.tidyWithinMs ?? 120_000,
    restFactor: options.restFactor ?? 3,
    restTailRows: options.restTailRows ?? 500,
    soleWriter: options.soleWriter ?? false,
    cacheBytes: options.cacheBytes ?? 256 * 1024 * 1024,
    fusion: options.fusion ?? DEFAULT_FUSION,
    renewAfterVersions: options.renewAfterVersions ?? 250,
    renewCheckMs: options.renewCheckMs ?? 5_000,
    waitAboveUnindexed: options.waitAboveUnindexed ?? 10_000,
    waitWhileAddingAbove: options.waitWhileAddingAbove ?? MAINTAIN_AFTER_ROWS,
    waitForIndexMs: options.waitForIndexMs ?? 30_000,
    waitForIndexRows: options.waitForIndexRows ?? 500_000,
    searchListedRows: options.searchListedRows ?? 5_000,
    publishAtOnceRows: options.publishAtOnceRows ?? 500,
  };
}
