import { statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";

/** The file whose modification time says when the index was last searched. */
const SEARCHED_FILE = "searched-at";

/**
 * Whether the index was searched lately, here or by another thread or process on the same
 * folder (the API searches, the worker writes and maintains): told by the modification time of
 * one empty file in the folder, which a search sets at most once a second.
 *
 * Why writers ask. A maintenance run compacts the whole table (LanceDB merges every fragment
 * under a million rows), so runs during a load cost in proportion to the table each time. They
 * keep the rows outside the full-text index few, which only searches need: while nobody searches,
 * a load goes on with fewer of them (see LanceIndexOptions.maintainAfterSearchMs). And a run with
 * nothing new to fold in waits for a pause in the searches (LanceIndexOptions.tidyWhenQuietMs).
 */
export class SearchDemand {
  readonly #file: string;
  readonly #recentMs: number;
  /** When this instance last set the file's time (its own searches count at once). */
  #noted = -Infinity;
  /** The file's time as last read, and when it was read (read at most once a second). */
  #seen = { at: -Infinity, searchedAt: -Infinity };
  /** Searches running now (see during), and the timer that notes them while there are any. */
  #running = 0;
  #ticking: NodeJS.Timeout | null = null;

  constructor(dir: string, recentMs: number) {
    this.#file = path.join(dir, SEARCHED_FILE);
    this.#recentMs = recentMs;
  }

  /** A search is running. */
  note(): void {
    const now = Date.now();
    if (now - this.#noted < 1_000) return;
    this.#noted = now;
    // Best effort: a folder that refuses it (read-only, full) only makes writers think nobody searched.
    writeFile(this.#file, "").catch(() => {});
  }

  /**
   * Runs a search, noting it as it starts, every second while it runs (one waiting for
   * maintenance to fold in a load's end waits for seconds: it is a search all the while), and as
   * it ends.
   */
  async during<T>(search: () => Promise<T>): Promise<T> {
    this.note();
    // One timer for all the searches running at once, not one a search.
    if (this.#running++ === 0) {
      this.#ticking = setInterval(() => this.note(), 1_000);
      this.#ticking.unref();
    }
    try {
      return await search();
    } finally {
      if (--this.#running === 0) clearInterval(this.#ticking!);
      this.note();
    }
  }

  /** Whether a search ran within the last `recentMs` (the file read at most once a second). */
  recent(): boolean {
    return this.#recentMs === Infinity || Date.now() - this.#searchedAt(1_000) < this.#recentMs;
  }

  /** Whether no search ran within the last `ms` (the file read again: a writer asks this on its timer only). */
  quietFor(ms: number): boolean {
    return Date.now() - this.#searchedAt(0) >= ms;
  }

  /** When the last search was noted, here or in the file, from a reading of the file at most `maxAgeMs` old. */
  #searchedAt(maxAgeMs: number): number {
    const now = Date.now();
    if (now - this.#seen.at >= maxAgeMs) {
      let searchedAt = -Infinity;
      try {
        searchedAt = statSync(this.#file).mtimeMs;
      } catch {
        // Never searched (no file yet).
      }
      this.#seen = { at: now, searchedAt };
    }
    return Math.max(this.#noted, this.#seen.searchedAt);
  }
}
