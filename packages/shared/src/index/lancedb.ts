import { constants } from "node:fs";
import { access } from "node:fs/promises";
import type { OptimizeStats, Table } from "@lancedb/lancedb";
import type { FindRequest, IndexedDocument, InventoryScope, ScanRequest, SearchIndex, SearchRequest } from "../ports.ts";
import { and, sqlString } from "../filter/lancedb.ts";
import { storageError } from "../storage-errors.ts";
import { indexDimensionMismatch } from "./lancedb-rows.ts";
import { findHeads, inventoryOf, readChunks, scanHeads, searchChunks } from "./lancedb-read.ts";
import { openChunkTable, TEXT_INDEX } from "./lancedb-table.ts";
import { TailWait, type TailCount } from "./lancedb-tail.ts";
import { SearchDemand } from "./lancedb-demand.ts";
import { Tombstones, hiddenBy, tombstonesWhere, type Hidden, type Tombstone } from "./lancedb-tombstones.ts";
import { TableConnection } from "./lancedb-connection.ts";
import { Maintenance } from "./lancedb-maintenance.ts";
import { withDefaults, type LanceIndexOptions, type LanceOptions } from "./lancedb-options.ts";
import { INDEX_PLACE, SerialWrites } from "./lancedb-serial.ts";
import { HeldKeys, concerning, refreshVersion, writeDocuments } from "./lancedb-write.ts";
import type { IndexItem } from "./versions.ts";

export type { LanceIndexOptions } from "./lancedb-options.ts";

/**
 * The SearchIndex on an embedded LanceDB table (layout in lancedb-rows.ts): one table of
 * chunks for every collection, so a search over several collections is one BM25 ranking.
 *
 * Writes of this instance run one at a time (lancedb-serial.ts); other processes (or instances)
 * on the same directory commit concurrently, and LanceDB retries conflicting commits. Each write
 * is one table version: a document's new version replaces the old one in one mergeInsert, so a
 * reader sees the one version or the other, never neither nor both (one exception: two processes
 * writing versions of one document at once, see settleRaces in lancedb-write.ts). Every commit
 * leaves a version and usually a small fragment behind; `maintain()` (on a timer, and after
 * enough rows or commits: lancedb-maintenance.ts) compacts them, folds new rows into the indexes
 * (rows appended after the full-text index was built are found only by a slower flat scan until
 * then; a search that finds a large tail of them waits for maintenance instead: see TailWait) and
 * removes versions older than `keepVersionsMs`. Deleting a document or a collection is answered
 * once it is recorded as a tombstone, which reads honour until it is applied
 * (lancedb-tombstones.ts). Every `renewAfterVersions` versions the table moves to a new
 * connection (lancedb-connection.ts), each operation keeping the one it started on until it ends.
 */
export class LanceSearchIndex implements SearchIndex {
  readonly #options: LanceOptions;
  readonly #connection: TableConnection;
  readonly #writes: SerialWrites;
  readonly #maintenance: Maintenance;
  /** The sole writer's record of the documents the table may hold (null when other writers may race). */
  readonly #held: HeldKeys | null;
  /** Holds a search back while maintenance folds a large tail of new rows into the index. */
  readonly #tail: TailWait;
  readonly #demand: SearchDemand;
  /** Deletions answered, not yet applied to the table (see lancedb-tombstones.ts). */
  readonly #tombstones: Tombstones;
  /** The application of every waiting tombstone under way, if one is. */
  #applying: Promise<void> | null = null;
  #applyTimer: NodeJS.Timeout | null = null;
  /** Whether the last application failed (its failure was logged). */
  #applyFailing = false;
  #closed = false;

  constructor(options: LanceIndexOptions) {
    this.#options = withDefaults(options);
    this.#demand = new SearchDemand(options.dir, this.#options.maintainAfterSearchMs);
    this.#tombstones = new Tombstones(options.dir);
    this.#held = this.#options.soleWriter ? new HeldKeys() : null;
    this.#tail = new TailWait(() => this.#textIndexCount(), {
      aboveRows: this.#options.waitAboveUnindexed,
      whileAddingAbove: this.#options.waitWhileAddingAbove,
      maxWaitMs: this.#options.waitForIndexMs,
      maxWaitRows: this.#options.waitForIndexRows,
    });
    this.#connection = new TableConnection(openChunkTable(options.dir, options.dimensions, this.#options.cacheBytes), this.#options);
    this.#writes = new SerialWrites(this.#connection);
    // Deletions a process answered and did not apply before it stopped.
    if (this.#tombstonesWait()) this.#applyPending();
    this.#maintenance = new Maintenance(
      {
        connection: this.#connection,
        writes: this.#writes,
        demand: this.#demand,
        textIndexCount: () => this.#textIndexCount(),
        onTick: () => {
          if (this.#tombstonesWait()) this.#applyPending();
        },
      },
      this.#options,
    );
  }

  /** Connections opened on the table so far, the first included. */
  get connections(): number {
    return this.#connection.connections;
  }

  /** Rows outside the full-text index, and the table's rows (LanceDB's index statistics, read from the manifest). */
  async #textIndexCount(): Promise<TailCount> {
    const stats = await this.#connection.with((table) => table.indexStats(TEXT_INDEX));
    const unindexed = stats?.numUnindexedRows ?? 0;
    return { unindexed, total: (stats?.numIndexedRows ?? 0) + unindexed };
  }

  #with<T>(use: (table: Table) => Promise<T>): Promise<T> {
    return this.#connection.with(use);
  }

  #withEach<T>(use: (table: Table) => AsyncGenerator<T>): AsyncGenerator<T> {
    return this.#connection.withEach(use);
  }

  #serial<T>(write: (table: Table) => Promise<T>): Promise<T> {
    return this.#writes.run(write);
  }

  #committed = (rows = 0): void => this.#maintenance.committed(rows);

  async indexDocuments(items: IndexItem[]): Promise<boolean[]> {
    if (items.length === 0) return [];
    const { vectorSize } = await this.#connection.opened;
    for (const { chunks } of items)
      for (const c of chunks) if (c.vector && c.vector.length !== vectorSize) throw indexDimensionMismatch(vectorSize, c.vector.length);
    return this.#serial(async (table) => {
      // A deletion answered before these documents were written must not remove them later.
      await this.#applyTombstones(table, concerning(items.map((i) => i.doc)));
      return writeDocuments(table, items, { vectorSize, held: this.#held, committed: this.#committed });
    });
  }

  async refreshDocument(doc: Omit<IndexedDocument, "text"> & { sha256: string }): Promise<number | null> {
    return this.#serial(async (table) => {
      await this.#applyTombstones(table, concerning([doc]));
      return refreshVersion(table, doc, this.#committed);
    });
  }

  /**
   * A whole document's deletion is answered once it is recorded (a tombstone, which every read
   * honours); it reaches the table afterwards, between this instance's writes. A deletion of one
   * version (a job that found itself superseded, the doctor) is applied at once.
   */
  async deleteDocument(collection: string, docId: string, version?: number): Promise<void> {
    await this.#connection.opened;
    if (version === undefined) return this.#entomb(collection, docId);
    const where = and([`collection = ${sqlString(collection)}`, `doc_id = ${sqlString(docId)}`, `version = ${Math.trunc(version)}`]);
    await this.#serial(async (table) => {
      await table.delete(String(where));
      this.#committed();
    });
  }

  async deleteCollection(collection: string): Promise<void> {
    await this.#connection.opened;
    this.#entomb(collection, null);
  }

  #entomb(collection: string, docId: string | null): void {
    try {
      this.#tombstones.add(collection, docId);
    } catch (err) {
      throw storageError(err, INDEX_PLACE) ?? err;
    }
    this.#applyPending();
  }

  /** Applies the waiting tombstones `select` keeps, within a write of this instance (see Tombstones.apply). */
  async #applyTombstones(table: Table, select: (pending: Tombstone[]) => Tombstone[]): Promise<void> {
    await this.#tombstones.apply(select, async (chosen) => {
      await table.delete(tombstonesWhere(chosen));
      this.#committed();
    });
  }

  /**
   * Applies every waiting tombstone, between this instance's writes; again as long as some wait
   * (those recorded meanwhile), and a second after a failure (logged once a run of failures).
   */
  #applyPending(): void {
    if (this.#applying || this.#closed) return;
    let failed = false;
    this.#applying = this.#serial((table) => this.#applyTombstones(table, (all) => all))
      .then(
        () => {
          if (this.#applyFailing) this.#options.logger?.info("search index: recorded deletions applied to the table again");
          this.#applyFailing = false;
        },
        (err: unknown) => {
          failed = true;
          if (!this.#applyFailing)
            this.#options.logger?.warn(
              { err },
              "search index: deletions recorded but not applied to the table; tried again every second (reads leave them out meanwhile)",
            );
          this.#applyFailing = true;
        },
      )
      .finally(() => {
        this.#applying = null;
        if (this.#closed || !this.#tombstonesWait()) return;
        if (!failed) return this.#applyPending();
        this.#applyTimer = setTimeout(() => this.#applyPending(), 1_000);
        this.#applyTimer.unref();
      });
  }

  /** Whether deletions wait to be applied; false when that cannot be read (the reads that need it report why). */
  #tombstonesWait(): boolean {
    try {
      return this.#tombstones.pending().length > 0;
    } catch {
      return false;
    }
  }

  /** What reads leave out: documents whose deletion is answered and not yet applied. */
  #hidden(): Hidden | null {
    return hiddenBy(this.#tombstones.pending());
  }

  // The reads are lancedb-read.ts's, which declares what they return; here they leave out what
  // tombstones hide, and hold the table's connection while they run.
  async search(request: SearchRequest) {
    const { vectorSize } = await this.#connection.opened;
    return this.#demand.during(async () => {
      await this.#tail.settle();
      const hidden = this.#hidden();
      return this.#with((table) => searchChunks(table, request, vectorSize, this.#options.fusion, hidden));
    });
  }

  async findDocuments(request: FindRequest) {
    const hidden = this.#hidden();
    return this.#demand.during(() => this.#with((table) => findHeads(table, request, hidden)));
  }

  async *scanDocuments(request: ScanRequest) {
    const hidden = this.#hidden();
    yield* this.#withEach((table) => scanHeads(table, request, hidden));
  }

  async documentChunks(collection: string, docId: string) {
    if (this.#hidden()?.has(collection, docId)) return null;
    return this.#with((table) => readChunks(table, collection, docId));
  }

  /**
   * Resolves once the rows this instance wrote before the call are in the full-text index: at
   * once when at most restTailRows rows are outside it (searches scan those in milliseconds),
   * otherwise when a maintenance run that started after the call has ended, or any run after
   * which at most restTailRows rows are outside it (a run's index update also takes the rows
   * committed while it compacted). It waits at most as long as a search would (waitForIndexMs
   * for each waitForIndexRows rows of the table: then the rows are still found, by the scan),
   * and not at all on an instance that maintains the table only when asked.
   */
  async whenSearchable(): Promise<void> {
    if (this.#closed) return;
    const after = this.#maintenance.runsStarted;
    // Not known (null): the rows are found all the same, by the scan.
    const shortTail = (count: TailCount | null) => count === null || count.unindexed <= this.#options.restTailRows;
    const count = await this.#textIndexCount().catch(() => null);
    if (shortTail(count)) return;
    const { waitForIndexMs, waitForIndexRows } = this.#options;
    const deadline = Date.now() + waitForIndexMs * Math.max(1, count!.total / waitForIndexRows);
    for (;;) {
      const run = await this.#maintenance.runEnded(deadline - Date.now());
      if (run === null || run > after || shortTail(await this.#textIndexCount().catch(() => null))) return;
    }
  }

  async *inventory(scope: InventoryScope, batch: number) {
    const hidden = this.#hidden();
    for await (const entries of this.#withEach((table) => inventoryOf(table, scope, batch))) {
      const shown = hidden ? entries.filter((e) => !hidden.has(e.collection, e.docId)) : entries;
      if (shown.length > 0) yield shown;
    }
  }

  /** Compacts fragments, brings the indexes up to date and removes old versions (lancedb-maintenance.ts). */
  maintain(): Promise<OptimizeStats> {
    return this.#maintenance.maintain();
  }

  /** Fails when the table cannot be read, or its folder cannot be written (read-only: a StorageError). */
  async ping(): Promise<void> {
    await this.#with((table) => table.countRows("false"));
    try {
      await access(this.#options.dir, constants.W_OK);
    } catch (err) {
      throw storageError(err, INDEX_PLACE) ?? err;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#tail.stop();
    if (this.#applyTimer) clearTimeout(this.#applyTimer);
    this.#connection.stopRenewing();
    await this.#maintenance.close();
    await this.#applying;
    await this.#writes.idle();
    this.#tombstones.close();
    await this.#connection.close();
  }
}
