import path from "node:path";
import type { Db } from "./db.ts";
import { storageError } from "../storage-errors.ts";

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for one connection: every write submitted during one turn of the event loop
 * runs in a single transaction, so concurrent requests share one commit instead of paying one
 * each, and they run in the order they were submitted. If the transaction fails, each write is
 * retried alone so that one bad write fails only its own caller; but when the filesystem
 * refuses it (no space, read-only), every write of the group fails with the StorageError and
 * nothing of it is written, so writes submitted together (a bulk load's records) are kept all
 * or none.
 */
export class GroupCommit {
  readonly #db: Db;
  /** The file, as error details name it. */
  readonly #place: string;
  #pending: Pending[] = [];
  #transactions = 0;

  constructor(db: Db) {
    this.#db = db;
    this.#place = path.basename(db.name);
  }

  /**
   * Which transaction a write runs in: a different number for each one this commit begins
   * (a group, or one write retried alone), so a store may remember what an earlier write of
   * the same transaction did, and forget it when the transaction is another.
   */
  get transaction(): number {
    return this.#transactions;
  }

  run<R>(work: () => R): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (this.#pending.length === 0) setImmediate(() => this.#flush());
      this.#pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  #flush(): void {
    const batch = this.#pending;
    this.#pending = [];
    if (!this.#db.open) {
      for (const p of batch) p.reject(new Error("database closed"));
      return;
    }
    let results: unknown[];
    try {
      this.#transactions++;
      results = this.#db.transaction(() => batch.map((p) => p.work())).immediate();
    } catch (err) {
      const refused = storageError(err, this.#place);
      if (refused) {
        for (const p of batch) p.reject(refused);
        return;
      }
      for (const p of batch) {
        try {
          this.#transactions++;
          p.resolve(this.#db.transaction(p.work).immediate());
        } catch (err) {
          p.reject(storageError(err, this.#place) ?? err);
        }
      }
      return;
    }
    batch.forEach((p, i) => p.resolve(results[i]));
  }
}
