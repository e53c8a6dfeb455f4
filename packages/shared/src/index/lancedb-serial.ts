/** This instance's writes to the chunk table, one at a time, each run again after a commit conflict. */
import { setTimeout as sleep } from "node:timers/promises";
import type { Table } from "@lancedb/lancedb";
import { storageError } from "../storage-errors.ts";
import type { TableConnection } from "./lancedb-connection.ts";

/** The index's folder, as error details name it. */
export const INDEX_PLACE = "index/";

export class SerialWrites {
  readonly #connection: TableConnection;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(connection: TableConnection) {
    this.#connection = connection;
  }

  /**
   * Runs `write` after this instance's earlier writes. A write whose commit conflicts with one
   * made meanwhile (maintenance compacting the fragments a merge reads, another process) is run
   * again from the start: each write reads what it needs, so running it again is safe. A write
   * the filesystem refuses (no space, read-only files) fails as a StorageError; LanceDB writes a
   * version's files before the manifest that makes them visible, so a refused commit changes
   * nothing a reader sees, and each document stays whole in its old version or its new one.
   */
  run<T>(write: (table: Table) => Promise<T>): Promise<T> {
    const attempt = async (): Promise<T> => {
      for (let n = 1; ; n++) {
        try {
          return await this.#connection.with(write);
        } catch (err) {
          if (n >= 8 || !isCommitConflict(err)) throw storageError(err, INDEX_PLACE) ?? err;
          await sleep(50 * n); // most conflicts are with a maintenance run's compaction: let it finish
        }
      }
    };
    const run = this.#queue.then(attempt);
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Settles once the writes asked for so far have ended. */
  idle(): Promise<unknown> {
    return this.#queue;
  }
}

/**
 * A commit refused because another one changed what this one read, LanceDB's own retries of
 * such a commit spent (seen under load: a delete beside other processes' appends and
 * compactions, "Too many concurrent writers"), or a read of a version that maintenance removed
 * meanwhile (it runs beside the writes): worth running again from the start.
 */
export function isCommitConflict(err: unknown): boolean {
  return (
    err instanceof Error &&
    /incompatible transaction|commit conflict|retryable|too many concurrent writers|Not found: \S+\.manifest/i.test(err.message)
  );
}
