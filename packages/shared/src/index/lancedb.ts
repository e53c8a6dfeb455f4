import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import type { OptimizeStats, Table } from "@lancedb/lancedb";
import type { DocumentChunks, FindRequest, IndexEntry, IndexedDocument, InventoryScope, ScanRequest, SearchHit, SearchIndex, SearchRequest } from "../ports.ts";
import type { Logger } from "../logger.ts";
import { and, sqlString } from "../filter/lancedb.ts";
import { metadataColumns } from "../filter/lancedb-columns.ts";
import { HIT_COLUMN, chunkId, documentRows, hitSql, indexDimensionMismatch, writeSchema } from "./lancedb-rows.ts";
import { documentsWhere, findHeads, inventoryOf, readChunks, scanHeads, searchChunks } from "./lancedb-read.ts";
import { rowsTable } from "./lancedb-arrow.ts";
import { openChunkTable, rebuildTextIndex, reopenChunkTable, TABLE_LAYOUT, TEXT_INDEX, type OpenTable } from "./lancedb-table.ts";
import { TailWait, type TailCount } from "./lancedb-tail.ts";
import { SearchDemand } from "./lancedb-demand.ts";
import { Tombstones, hiddenBy, tombstonesWhere, type Hidden, type Tombstone } from "./lancedb-tombstones.ts";
import { DEFAULT_FUSION, type HybridFusion } from "../search/fusion.ts";
import { storageError } from "../storage-errors.ts";
import { acceptInOrder, keyOf, newestVersions, type DocumentKey as Key, type IndexItem as Item } from "./versions.ts";

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
   * for when they left no row outside the full-text index (see #tidyDue and #foldsIn): each merges
   * the fragment the last run left with the table's, which rewrites every row of a table under a
   * million rows. The first does not wait when the table is one fragment: it has nothing to
   * merge.
   */
  tidyWhenQuietMs?: number;
  tidyWithinMs?: number;
  /**
   * After a run, a run that writes' pause calls for on a tail of at most restTailRows rows (default
   * 500: every full-text search scans them meanwhile, about 50 ms for 500) waits restFactor times as
   * long as that run took (default 3; 0 for no rest). A run rewrites the table (under a million
   * rows), so without the rest a trickle of writes, each followed by a pause, kept the table
   * being rewritten: at 200,000 rows, 10 documents every 3 s cost 61 CPU s a minute and 3.4 GB
   * of writes (bench:trickle). With it, such runs take about a quarter of the time at most.
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
   * version a connection has seen until it is closed (0.39: 0.1 to 0.3 MiB a version).
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
}

/** An open table and the operations still using it: a replaced one is closed when they end. */
type Handle = OpenTable & { users: number; retired: boolean; since: number };

/** The index's folder, as error details name it. */
const INDEX_PLACE = "index/";
const MAINTAIN_AFTER_ROWS = 20_000;
/**
 * While nobody searches, rows a load may write before a run, in maintainAfterRows. A run during
 * a load of 200,000 documents (at 100,000 rows) made them ready 20% later, and the first search
 * after it came no sooner: its compaction was done again at the load's end (bench:scale).
 */
const QUIET_ROWS_FACTOR = 15;

/**
 * The SearchIndex on an embedded LanceDB table (layout in lancedb-rows.ts): one table of
 * chunks for every collection, so a search over several collections is one BM25 ranking.
 *
 * Writes of this instance run one at a time; other processes (or instances) on the same
 * directory commit concurrently, and LanceDB retries conflicting commits. Each write is one
 * table version: a document's new version replaces the old one in one mergeInsert, so a reader
 * sees the one version or the other, never neither nor both (one exception: two processes
 * writing versions of one document at once, see #settleRaces). Every commit leaves a version
 * and usually a small fragment behind; `maintain()` (on a timer, and after enough rows or
 * commits) compacts them, folds new rows into the indexes (rows appended after the full-text
 * index was built are found only by a slower flat scan until then; a search that finds a large
 * tail of them waits for maintenance instead: see TailWait) and removes
 * versions older than `keepVersionsMs`. Deleting a document or a collection is answered once it
 * is recorded as a tombstone, which reads honour until it is applied (lancedb-tombstones.ts).
 * Every `renewAfterVersions` versions the table moves to a
 * new connection (#renewIfDue), each operation keeping the one it started on until it ends.
 */
export class LanceSearchIndex implements SearchIndex {
  readonly #options: Required<Omit<LanceIndexOptions, "logger">> & Pick<LanceIndexOptions, "logger">;
  /** The first opening; then #current is the table in use. */
  readonly #opened: Promise<Handle>;
  #current: Handle | null = null;
  #renewing = false;
  #renewTimer: NodeJS.Timeout | null = null;
  /** Connections opened on the table, the first included (renewed after renewAfterVersions). */
  #connections = 1;
  #queue: Promise<unknown> = Promise.resolve();
  #maintenanceQueue: Promise<unknown> = Promise.resolve();
  /** Commits since the last maintenance, and the rows they wrote. */
  #commits = 0;
  #rows = 0;
  /** When the versions the last maintenance replaced can be removed (0: nothing waits). */
  #cleanupAfter = 0;
  /** Rows the table held as the last maintenance started and as it ended: the rows written before the next one grow with them. */
  #lastRun = { startRows: 0, endRows: 0 };
  #lastCommit = 0;
  /** Until when a run that a pause calls for on a short tail waits (restFactor). */
  #restUntil = 0;
  #maintaining: Promise<unknown> | null = null;
  /**
   * A table of layout 1 only (see TABLE_LAYOUT): whether its full-text index may rank rows that a
   * compaction dropped (earlier runs may have left such rows), from opening one until a run
   * builds it again (the maintenance timer starts one at its next tick). Each run that compacts
   * such a table also builds it again, after its compaction.
   */
  #textIndexStale = false;
  /** Whether the last maintenance run failed (its failure was logged). */
  #maintenanceFailing = false;
  #timer: NodeJS.Timeout | null = null;
  #pauseTimer: NodeJS.Timeout | null = null;
  /**
   * A sole writer's record of every document the table may hold: hashes of their keys, read
   * from the table once, then added before each write (deletes leave them: a superset). A
   * document whose hash is absent is surely new, and skips the version lookup, which costs more
   * than the append itself once many rows wait for maintenance (they are scanned, not looked up).
   */
  #held: Promise<Set<number>> | null = null;
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
    this.#options = {
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
    };
    this.#demand = new SearchDemand(options.dir, this.#options.maintainAfterSearchMs);
    this.#tombstones = new Tombstones(options.dir);
    this.#tail = new TailWait(() => this.#textIndexCount(), {
      aboveRows: this.#options.waitAboveUnindexed,
      whileAddingAbove: this.#options.waitWhileAddingAbove,
      maxWaitMs: this.#options.waitForIndexMs,
      maxWaitRows: this.#options.waitForIndexRows,
    });
    this.#opened = openChunkTable(options.dir, options.dimensions, this.#options.cacheBytes).then(async (opened) => {
      this.#textIndexStale = opened.layout < TABLE_LAYOUT;
      return (this.#current = { ...opened, users: 0, retired: false, since: await opened.table.version() });
    });
    this.#opened.catch(() => {}); // reported by the first call that awaits it
    // Deletions a process answered and did not apply before it stopped.
    if (this.#tombstonesWait()) this.#applyPending();
    if (this.#options.maintainEveryMs > 0) {
      this.#timer = setInterval(() => {
        if (this.#tombstonesWait()) this.#applyPending();
        void this.#maintainIfDue(true);
      }, this.#options.maintainEveryMs);
      this.#timer.unref();
    }
    if (this.#options.renewAfterVersions > 0) {
      this.#renewTimer = setInterval(() => void this.#renewIfDue(), this.#options.renewCheckMs);
      this.#renewTimer.unref();
    }
  }

  /** Connections opened on the table so far, the first included. */
  get connections(): number {
    return this.#connections;
  }

  /** Rows outside the full-text index, and the table's rows (LanceDB's index statistics, read from the manifest). */
  async #textIndexCount(): Promise<TailCount> {
    const stats = await this.#with((table) => table.indexStats(TEXT_INDEX));
    const unindexed = stats?.numUnindexedRows ?? 0;
    return { unindexed, total: (stats?.numIndexedRows ?? 0) + unindexed };
  }

  /** Runs `use` on the table; the connection it was given is not closed before `use` ends. */
  async #with<T>(use: (table: Table) => Promise<T>): Promise<T> {
    const handle = await this.#acquire();
    try {
      return await use(handle.table);
    } finally {
      release(handle);
    }
  }

  async *#withEach<T>(use: (table: Table) => AsyncGenerator<T>): AsyncGenerator<T> {
    const handle = await this.#acquire();
    try {
      yield* use(handle.table);
    } finally {
      release(handle);
    }
  }

  /** The table in use, counted as used: taken in the same step as it is read, so never one closed meanwhile. */
  async #acquire(): Promise<Handle> {
    await this.#opened;
    const handle = this.#current!;
    handle.users += 1;
    return handle;
  }

  /**
   * Opens the table on a new connection once the current one has seen renewAfterVersions
   * versions; the old one is closed when the operations using it end. Fails quietly: the
   * current connection stays, and the next check tries again.
   */
  async #renewIfDue(): Promise<void> {
    if (this.#renewing) return;
    this.#renewing = true;
    try {
      const handle = await this.#acquire();
      let next: Handle | null = null;
      try {
        const version = await handle.table.version();
        if (version - handle.since < this.#options.renewAfterVersions || handle.retired) return;
        const opened = await reopenChunkTable(handle);
        next = { ...opened, users: 0, retired: false, since: await opened.table.version() };
      } finally {
        release(handle);
      }
      if (handle.retired) {
        // Closed meanwhile (close()): the new connection is not needed.
        closeHandle(next);
        return;
      }
      this.#current = next;
      this.#connections += 1;
      handle.retired = true;
      if (handle.users === 0) closeHandle(handle);
    } catch (err) {
      this.#options.logger?.warn({ err }, "search index: could not open a new connection; the current one stays");
    } finally {
      this.#renewing = false;
    }
  }

  /**
   * Runs `write` after this instance's earlier writes. A write whose commit conflicts with one
   * made meanwhile (maintenance compacting the fragments a merge reads, another process) is run
   * again from the start: each write reads what it needs, so running it again is safe. A write
   * the filesystem refuses (no space, read-only files) fails as a StorageError; LanceDB writes a
   * version's files before the manifest that makes them visible, so a refused commit changes
   * nothing a reader sees, and each document stays whole in its old version or its new one.
   */
  #serial<T>(write: (table: Table) => Promise<T>): Promise<T> {
    const attempt = async (): Promise<T> => {
      for (let n = 1; ; n++) {
        try {
          return await this.#with(write);
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

  #committed(rows = 0): void {
    this.#lastCommit = Date.now();
    this.#commits += 1;
    this.#rows += rows;
    void this.#maintainIfDue(false);
    this.#checkWhenPaused();
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

  async indexDocuments(items: Item[]): Promise<boolean[]> {
    if (items.length === 0) return [];
    const { vectorSize } = await this.#opened;
    for (const { chunks } of items) for (const c of chunks) if (c.vector && c.vector.length !== vectorSize) throw indexDimensionMismatch(vectorSize, c.vector.length);
    return this.#serial(async (table) => {
      // A deletion answered before these documents were written must not remove them later.
      await this.#applyTombstones(table, concerning(items.map((i) => i.doc)));
      const held = this.#options.soleWriter ? await this.#heldKeys(table) : null;
      const current = await this.#versions(table, items.map((i) => i.doc).filter((d) => held === null || held.has(keyHash(d))));
      const indexed = new Set(current.keys());
      // As if applied one by one (acceptInOrder): the last accepted item of each document is written.
      const { accepted, latest: chosen } = acceptInOrder(items, current);
      if (chosen.length === 0) return accepted;
      for (const { doc } of chosen) held?.add(keyHash(doc));
      const writer = randomUUID();
      // The documents the index does not hold yet are appended, one commit for all of them, and
      // each appears whole: an append reads nothing, where a merge reads every fragment (measured:
      // 5 ms against 150 ms with 800 fragments). Another writer may append the same document, or
      // another version of it, at the same moment: #settleRaces then leaves one copy of the newest
      // (a merge would not prevent that either: LanceDB does not see two inserts of one id as a
      // conflict). The documents it holds are replaced by the merge.
      const fresh = chosen.filter((item) => !indexed.has(keyOf(item.doc)));
      const replacing = chosen.filter((item) => indexed.has(keyOf(item.doc)));
      // Columns as the table has them; read once for the append and the merge alike.
      const schema = writeSchema(await table.schema(), vectorSize);
      if (fresh.length > 0) {
        const rows = fresh.flatMap(({ doc, chunks }) => documentRows(doc, chunks, vectorSize, writer));
        await table.add(rowsTable(rows, schema));
        this.#committed(rows.length);
      }
      if (replacing.length > 0) {
        const rows = replacing.flatMap(({ doc, chunks }) => documentRows(doc, chunks, vectorSize, writer));
        // Old rows of these documents that the new version does not overwrite are deleted in the
        // same commit; the version guards keep a newer version another process committed meanwhile.
        const stale = replacing.map(({ doc }) => `(collection = ${sqlString(doc.collection)} AND doc_id = ${sqlString(doc.docId)} AND version <= ${doc.version})`);
        await table.mergeInsert("id")
          .whenMatchedUpdateAll({ where: "target.version <= source.version" })
          .whenNotMatchedInsertAll()
          .whenNotMatchedBySourceDelete({ where: stale.join(" OR ") })
          .execute(rowsTable(rows, schema));
        this.#committed(rows.length);
      }
      if (!this.#options.soleWriter) await this.#settleRaces(table, chosen, accepted, items);
      return accepted;
    });
  }

  /**
   * Another writer may have committed a version of a document between our version check and
   * our commit. A newer one: our merge kept its rows but added our chunks beyond its count;
   * the older rows are removed. The same one: two merges (or appends) of the same new rows both
   * inserted them (LanceDB does not see that conflict); the rows of every writer but the one
   * with the smallest id are removed, which every writer that sees the duplicates decides alike,
   * so the deletes commute and the last writer to settle leaves one copy. These second commits
   * are the only moments a reader could see a document twice.
   */
  async #settleRaces(table: Table, chosen: Item[], accepted: boolean[], items: Item[]): Promise<void> {
    const rows = (await table.query().where(String(documentsWhere(chosen.map((i) => i.doc)))).select(["id", "collection", "doc_id", "version", "writer"]).toArray()) as
      { id: string; collection: string; doc_id: string; version: bigint; writer: string }[];
    const versions = Map.groupBy(rows, (r) => keyOf({ collection: r.collection, docId: r.doc_id }));
    for (const [key, group] of versions) {
      const max = group.reduce((m, r) => (r.version > m ? r.version : m), group[0]!.version);
      const { collection, doc_id: docId } = group[0]!;
      const scope = `collection = ${sqlString(collection)} AND doc_id = ${sqlString(docId)}`;
      if (group.some((r) => r.version !== max)) {
        await table.delete(`${scope} AND version < ${max}`);
        this.#committed();
        items.forEach((item, i) => {
          if (keyOf(item.doc) === key && BigInt(item.doc.version) < max) accepted[i] = false;
        });
      }
      const current = group.filter((r) => r.version === max);
      if (new Set(current.map((r) => r.id)).size === current.length) continue;
      const keep = current.reduce((m, r) => (r.writer < m ? r.writer : m), current[0]!.writer);
      await table.delete(`${scope} AND version = ${max} AND writer <> ${sqlString(keep)}`);
      this.#committed();
    }
  }

  #heldKeys(table: Table): Promise<Set<number>> {
    this.#held ??= (async () => {
      const held = new Set<number>();
      for await (const batch of table.query().where("head = true").select(["collection", "doc_id"])) {
        const collections = batch.getChild("collection")!;
        const docIds = batch.getChild("doc_id")!;
        for (let i = 0; i < batch.numRows; i++) held.add(keyHash({ collection: collections.get(i) as string, docId: docIds.get(i) as string }));
      }
      return held;
    })();
    this.#held.catch(() => (this.#held = null)); // read again by the next write
    return this.#held;
  }

  /** The indexed version of each of these documents that has one, read from their head rows. */
  async #versions(table: Table, docs: Key[]): Promise<Map<string, number>> {
    if (docs.length === 0) return new Map();
    // A head row is chunk 0, or the placeholder -1 of a document without chunks: exact lookups
    // in the id's B-tree, cheaper than matching the documents' other rows too.
    const ids = docs.flatMap((d) => [chunkId(d.collection, d.docId, 0), chunkId(d.collection, d.docId, -1)]);
    const rows = (await table.query().where(`id IN (${[...new Set(ids)].map(sqlString).join(", ")}) AND head = true`).select(["collection", "doc_id", "version"]).toArray()) as
      { collection: string; doc_id: string; version: bigint }[];
    return newestVersions(rows.map((r) => ({ collection: r.collection, docId: r.doc_id, version: Number(r.version) })));
  }

  async refreshDocument(doc: Omit<IndexedDocument, "text"> & { sha256: string }): Promise<number | null> {
    return this.#serial(async (table) => {
      await this.#applyTombstones(table, concerning([doc]));
      const scope = `collection = ${sqlString(doc.collection)} AND doc_id = ${sqlString(doc.docId)}`;
      const rows = (await table.query().where(scope).select(["version", "sha256", "chunk"]).toArray()) as { version: bigint; sha256: string | null; chunk: number }[];
      const version = rows[0]?.version;
      if (version === undefined || rows.some((r) => r.version !== version || r.sha256 !== doc.sha256) || Number(version) > doc.version) return null;
      // One update of every row of that version: atomic, and a no-op if the version changed.
      const values = Object.fromEntries(Object.entries(metadataColumns(doc.metadata)).map(([column, v]) => [column, sqlValue(v)]));
      const valuesSql = { ...values, [HIT_COLUMN]: hitSql(values.metadata), version: String(doc.version) };
      const { rowsUpdated } = await table.update({ where: `${scope} AND version = ${version}`, valuesSql });
      this.#committed();
      return rowsUpdated === rows.length ? rows.filter((r) => r.chunk >= 0).length : null;
    });
  }

  /**
   * A whole document's deletion is answered once it is recorded (a tombstone, which every read
   * honours); it reaches the table afterwards, between this instance's writes. A deletion of one
   * version (a job that found itself superseded, the doctor) is applied at once.
   */
  async deleteDocument(collection: string, docId: string, version?: number): Promise<void> {
    await this.#opened;
    if (version === undefined) return this.#entomb(collection, docId);
    const where = and([`collection = ${sqlString(collection)}`, `doc_id = ${sqlString(docId)}`, `version = ${Math.trunc(version)}`]);
    await this.#serial(async (table) => {
      await table.delete(String(where));
      this.#committed();
    });
  }

  async deleteCollection(collection: string): Promise<void> {
    await this.#opened;
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
          if (!this.#applyFailing) this.#options.logger?.warn({ err }, "search index: deletions recorded but not applied to the table; tried again every second (reads leave them out meanwhile)");
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

  async search(request: SearchRequest): Promise<SearchHit[]> {
    const { vectorSize } = await this.#opened;
    return this.#demand.during(async () => {
      await this.#tail.settle();
      const hidden = this.#hidden();
      return this.#with((table) => searchChunks(table, request, vectorSize, this.#options.fusion, hidden));
    });
  }

  async findDocuments(request: FindRequest): Promise<IndexedDocument[]> {
    const hidden = this.#hidden();
    return this.#demand.during(() => this.#with((table) => findHeads(table, request, hidden)));
  }

  async *scanDocuments(request: ScanRequest): AsyncGenerator<IndexedDocument[]> {
    const hidden = this.#hidden();
    yield* this.#withEach((table) => scanHeads(table, request, hidden));
  }

  async documentChunks(collection: string, docId: string): Promise<DocumentChunks | null> {
    if (this.#hidden()?.has(collection, docId)) return null;
    return this.#with((table) => readChunks(table, collection, docId));
  }

  async *inventory(scope: InventoryScope, batch: number): AsyncGenerator<IndexEntry[]> {
    const hidden = this.#hidden();
    for await (const entries of this.#withEach((table) => inventoryOf(table, scope, batch))) {
      const shown = hidden ? entries.filter((e) => !hidden.has(e.collection, e.docId)) : entries;
      if (shown.length > 0) yield shown;
    }
  }

  /**
   * Compacts fragments, brings the indexes up to date and removes old versions. Queries and
   * writes go on meanwhile: appends commit beside it (measured: five appends of 500 rows done in
   * 0.4 s while a run over 100,000 rows took 12 s); a write whose commit conflicts with its
   * compaction runs again (see #serial), and so does the run (see #maintain). Its cost grows with the table (1.3 s at 20,000 rows,
   * 4.7 s at 200,000), so the rows written before the next run grow with it too (`#lastRun`).
   */
  maintain(): Promise<OptimizeStats> {
    // One run at a time: two would conflict with each other.
    const run = this.#maintenanceQueue.then(() => this.#maintain());
    this.#maintenanceQueue = run.catch(() => {});
    return run;
  }

  async #maintain(): Promise<OptimizeStats> {
    const started = Date.now();
    const wrote = this.#commits > 0;
    this.#commits = 0;
    this.#rows = 0;
    const before = await this.#with((table) => table.version());
    const startRows = await this.#with((table) => table.countRows());
    const optimize = (table: Table) => table.optimize({ cleanupOlderThan: new Date(Date.now() - this.#options.keepVersionsMs) });
    let stats: OptimizeStats | undefined;
    // Beside the writes first; a replacement or delete that touched the fragments it compacts
    // makes its commit fail, and after two such failures it runs between this instance's writes.
    for (let attempt = 1; stats === undefined; attempt++) {
      try {
        stats = attempt <= 2 ? await this.#with(optimize) : await this.#serial(optimize);
      } catch (err) {
        if (attempt > 2 || !isCommitConflict(err)) throw err;
      }
    }
    const { layout } = await this.#opened;
    if (layout < TABLE_LAYOUT && (this.#textIndexStale || stats.compaction.fragmentsRemoved > 0)) {
      // Between the compaction's commit and this one, searches may come back short (layout 1 only).
      await this.#serial(rebuildTextIndex);
      this.#textIndexStale = false;
      this.#options.logger?.info({ layout }, "search index: full-text index built again after a compaction (a table of an older layout)");
    }
    // What this run replaced, and committed, is kept for keepVersionsMs: one more run after that
    // removes it. That holds for a run after no write too: the one 10 s after a load's fold-in
    // merges the load's fragments, and their files (as large as the table) stayed until the
    // next write. A run that committed nothing leaves nothing to remove.
    const committed = (await this.#with((table) => table.version())) > before;
    this.#cleanupAfter = wrote || committed ? Date.now() + this.#options.keepVersionsMs : 0;
    this.#lastRun = { startRows, endRows: await this.#with((table) => table.countRows()) };
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
      return (await this.#with((table) => table.stats())).fragmentStats.numFragments <= 1;
    } catch {
      return false; // not known: wait as any tidying run does
    }
  }

  /** Whether a run that would only tidy, due since `since`, may start: searches paused, or tidyWithinMs has passed. */
  #mayTidy(since: number): boolean {
    return Date.now() >= since + this.#options.tidyWithinMs || this.#demand.quietFor(this.#options.tidyWhenQuietMs);
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
      unindexed = (await this.#textIndexCount()).unindexed;
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
    const searched = this.#demand.recent();
    const { startRows, endRows } = this.#lastRun;
    const afterRows = searched ? Math.max(maintainAfterRows, Math.floor(endRows / 2)) : Math.max(QUIET_ROWS_FACTOR * maintainAfterRows, startRows);
    const enoughWritten = this.#rows >= afterRows || this.#commits >= (searched ? 1 : 10) * maintainAfterCommits;
    // The timer folds in what a load left once writes pause; during a load, rows and commits decide.
    const due = (timer && this.#textIndexStale) || (this.#commits > 0 ? enoughWritten || (timer && paused && !this.#maintaining && (await this.#foldsIn())) : timer && !this.#maintaining && (await this.#tidyDue()));
    if (this.#maintaining || !due) return;
    const started = Date.now();
    const written = { rows: this.#rows, commits: this.#commits, searched };
    this.#maintaining = this.maintain().then(
      (stats) => {
        this.#maintenanceFailing = false;
        this.#options.logger?.info({ stats, ...written, ms: Date.now() - started }, "search index maintained");
        // Writes committed during the run are folded in once they pause, as after any commit.
        if (this.#commits > 0) this.#checkWhenPaused();
      },
      (err: unknown) => {
        // What it was to fold in is still there (its counts were reset as it started): the timer
        // runs it again, once DATA_DIR has room again, say. Said once per run of failures; the
        // next success is logged.
        this.#commits = Math.max(this.#commits, 1);
        if (!this.#maintenanceFailing) this.#options.logger?.warn({ err: storageError(err, INDEX_PLACE) ?? err }, "search index maintenance failed; the timer retries it");
        this.#maintenanceFailing = true;
      },
    ).finally(() => {
      this.#maintaining = null;
    });
    await this.#maintaining;
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
    if (this.#timer) clearInterval(this.#timer);
    if (this.#pauseTimer) clearTimeout(this.#pauseTimer);
    if (this.#renewTimer) clearInterval(this.#renewTimer);
    this.#timer = this.#renewTimer = null;
    await this.#maintaining;
    await this.#applying;
    await this.#queue;
    this.#tombstones.close();
    const opened = await this.#opened.then(() => this.#current, () => null);
    if (opened && !opened.retired) {
      opened.retired = true;
      if (opened.users === 0) closeHandle(opened);
    }
  }
}

/** Selects the tombstones that delete any of these documents (theirs, or their collection's). */
function concerning(docs: readonly Key[]): (pending: Tombstone[]) => Tombstone[] {
  const collections = new Set(docs.map((d) => d.collection));
  const keys = new Set(docs.map(keyOf));
  return (pending) => pending.filter((t) => collections.has(t.collection) && (t.docId === null || keys.has(keyOf({ collection: t.collection, docId: t.docId }))));
}

function release(handle: Handle): void {
  handle.users -= 1;
  if (handle.retired && handle.users === 0) closeHandle(handle);
}

function closeHandle(handle: Handle): void {
  handle.table.close();
  handle.db.close();
}

/** FNV-1a of a document's key, in 31 bits (a small integer to V8). Two keys may share a hash: that only costs a lookup. */
function keyHash({ collection, docId }: Key): number {
  let h = 0x811c9dc5;
  const mix = (s: string) => {
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  };
  mix(collection);
  h = Math.imul(h ^ 0x1f, 0x01000193);
  mix(docId);
  return h >>> 1;
}

function sqlValue(v: unknown): string {
  if (v === null) return "NULL";
  if (typeof v === "string") return sqlString(v);
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  if (Array.isArray(v)) return v.length === 0 ? "arrow_cast(make_array(), 'List(Utf8)')" : `[${v.map((x) => sqlString(String(x))).join(", ")}]`;
  throw new Error(`no SQL literal for ${typeof v}`);
}

/**
 * A commit refused because another one changed what this one read, LanceDB's own retries of
 * such a commit spent (seen under load: a delete beside other processes' appends and
 * compactions, "Too many concurrent writers"), or a read of a version that maintenance removed
 * meanwhile (it runs beside the writes): worth running again from the start.
 */
function isCommitConflict(err: unknown): boolean {
  return err instanceof Error && /incompatible transaction|commit conflict|retryable|too many concurrent writers|Not found: \S+\.manifest/i.test(err.message);
}
