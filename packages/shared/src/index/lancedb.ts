import { constants } from "node:fs";
import { access } from "node:fs/promises";
import type { OptimizeStats, Table } from "@lancedb/lancedb";
import type {
  FindRequest,
  IndexedDocument,
  InventoryScope,
  PublishedDocument,
  ScanRequest,
  SearchIndex,
  SearchRequest,
  WriteOptions,
} from "../ports.ts";
import { and, sqlString } from "../filter/lancedb.ts";
import { storageError } from "../storage-errors.ts";
import { indexDimensionMismatch } from "./lancedb-rows.ts";
import { findHeads, inventoryOf, readChunks, scanHeads, searchChunks } from "./lancedb-read.ts";
import { openChunkTable, TABLE_LAYOUT, TEXT_INDEX } from "./lancedb-table.ts";
import { OutsideIndex, type OutsideDocument, type OutsideList } from "./lancedb-outside.ts";
import { TailWait, type TailCount } from "./lancedb-tail.ts";
import { SearchDemand } from "./lancedb-demand.ts";
import { Tombstones, hiddenBy, tombstonesWhere, type Hidden, type Tombstone } from "./lancedb-tombstones.ts";
import { TableConnection } from "./lancedb-connection.ts";
import { Maintenance } from "./lancedb-maintenance.ts";
import { withDefaults, type LanceIndexOptions, type LanceOptions } from "./lancedb-options.ts";
import { INDEX_PLACE, SerialWrites } from "./lancedb-serial.ts";
import { HeldKeys, concerning, refreshVersion, writeDocuments, type Listed } from "./lancedb-write.ts";
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
 * and removes versions older than `keepVersionsMs`. Rows appended since the last run are outside
 * the full-text index: a full-text search reads the index alone, and scans only the rows of the
 * documents listed as outside it (lancedb-outside.ts: those a write made visible at once, and those
 * published before a run folded them in); past `searchListedRows` listed rows it scans every row
 * outside the index (LanceDB's default), and then waits for maintenance first when that tail is
 * large (TailWait). Deleting a document or a collection is answered
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
  /** Documents searches must find whose rows may be outside the full-text index (lancedb-outside.ts). */
  readonly #outside: OutsideIndex;
  /**
   * True while the table may hold rows outside the full-text index that nothing lists (a folder
   * written before the list existed): searches then scan every row outside the index, until a
   * run has folded them in.
   */
  #unlisted: Promise<boolean>;
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
    this.#outside = new OutsideIndex(options.dir);
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
        outside: {
          mark: () => this.#outside.mark(),
          folded: (mark) => {
            this.#outside.create();
            this.#outside.clear(mark);
            this.#unlisted = Promise.resolve(false);
          },
        },
        onTick: () => {
          if (this.#tombstonesWait()) this.#applyPending();
        },
      },
      this.#options,
    );
    this.#unlisted = this.#connection.opened
      .then(async () => {
        if (this.#outside.exists()) return false;
        if ((await this.#textIndexCount()).unindexed > 0) {
          this.#maintenance.foldInSoon();
          return true;
        }
        try {
          this.#outside.create();
        } catch {
          // A folder that cannot be written: the writes say so.
        }
        return false;
      })
      .catch(() => true);
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

  /** Lists what a write made visible, unless it is deferred (then publish does). */
  #listed(options: WriteOptions | undefined): Listed | null {
    return options?.deferred ? null : (docs) => this.#list(docs);
  }

  #list(docs: OutsideDocument[]): void {
    try {
      this.#outside.add(docs);
    } catch (err) {
      throw storageError(err, INDEX_PLACE) ?? err;
    }
  }

  async indexDocuments(items: IndexItem[], options?: WriteOptions): Promise<boolean[]> {
    if (items.length === 0) return [];
    const { vectorSize } = await this.#connection.opened;
    for (const { chunks } of items)
      for (const c of chunks) if (c.vector && c.vector.length !== vectorSize) throw indexDimensionMismatch(vectorSize, c.vector.length);
    return this.#serial(async (table) => {
      // A deletion answered before these documents were written must not remove them later.
      await this.#applyTombstones(table, concerning(items.map((i) => i.doc)));
      return writeDocuments(table, items, {
        vectorSize,
        held: this.#held,
        committed: this.#committed,
        listed: this.#listed(options),
      });
    });
  }

  async refreshDocument(doc: Omit<IndexedDocument, "text"> & { sha256: string }, options?: WriteOptions): Promise<number | null> {
    return this.#serial(async (table) => {
      await this.#applyTombstones(table, concerning([doc]));
      return refreshVersion(table, doc, this.#committed, this.#listed(options));
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

  /**
   * The documents a full-text search scans besides the index; null when it scans every row
   * outside the index instead: more than searchListedRows rows listed, the list not readable, or
   * a table of an older layout (its text index is built again after each compaction, so rows it
   * held may be outside it meanwhile).
   */
  async #outsideList(layout: number): Promise<OutsideList | null> {
    if (layout < TABLE_LAYOUT) return null;
    if (await this.#unlisted) {
      // Another process on the folder makes the file only once a run has folded those rows in.
      if (!this.#outside.exists()) return null;
      this.#unlisted = Promise.resolve(false);
    }
    try {
      return this.#outside.list(this.#options.searchListedRows);
    } catch {
      return null;
    }
  }

  // The reads are lancedb-read.ts's, which declares what they return; here they leave out what
  // tombstones hide, and hold the table's connection while they run.
  async search(request: SearchRequest) {
    const { vectorSize, layout } = await this.#connection.opened;
    return this.#demand.during(async () => {
      // Read before the table is: a document leaves the list only once the index holds it.
      let outside = await this.#outsideList(layout);
      if (outside === null) {
        await this.#tail.settle();
        outside = await this.#outsideList(layout); // a run may have shortened it meanwhile
      }
      const hidden = this.#hidden();
      return this.#with((table) => searchChunks(table, request, vectorSize, this.#options.fusion, hidden, outside));
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
   * Makes documents written `deferred` (by this instance, before the call) visible to searches.
   * It resolves without listing them once the full-text index holds their rows: when no row is
   * outside it, or when a maintenance run that started after the call has ended. Otherwise it
   * lists them as outside the index (lancedb-outside.ts), then resolves: at once while at most
   * publishAtOnceRows rows are outside the index, theirs included (no large load goes on: a
   * search scans the listed rows, and the tail to find them, in milliseconds; looked at again
   * after each run), or once `now` is aborted, or when no run has ended or been under way for as
   * long as a search would wait for one (waitForIndexMs for each waitForIndexRows rows of the
   * table: maintenance may be failing), or at once on an instance that maintains the table only
   * when asked. It waits as long as runs go on: listed after a fixed wait, a large load's
   * documents made every search scan the whole tail (more than searchListedRows rows listed),
   * as runs at a million rows take most of a minute.
   */
  async publish(docs: readonly PublishedDocument[], now?: AbortSignal): Promise<void> {
    if (docs.length === 0) return;
    const after = this.#maintenance.runsStarted;
    const listing = docs.map((d) => ({ collection: d.collection, docId: d.docId, rows: Math.max(1, d.chunks) }));
    const { waitForIndexMs, waitForIndexRows, publishAtOnceRows } = this.#options;
    let deadline: number | null = null;
    while (!this.#closed && !now?.aborted) {
      const count = await this.#textIndexCount().catch(() => null);
      if (count?.unindexed === 0) return;
      if (count === null || count.unindexed <= publishAtOnceRows) break;
      deadline ??= Date.now() + waitForIndexMs * Math.max(1, count.total / waitForIndexRows);
      const run = await this.#maintenance.runEnded(deadline - Date.now(), 0, now);
      if (run !== null && run > after) return;
      // A run ended, or one is under way: maintenance goes on, and a run after the call folds them in.
      if (run !== null || (this.#maintenance.running && !now?.aborted && !this.#closed)) deadline = null;
      else break;
    }
    this.#list(listing);
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
    this.#outside.close();
    await this.#connection.close();
  }
}
