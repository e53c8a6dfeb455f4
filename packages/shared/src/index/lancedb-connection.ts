/**
 * The chunk table's connection, renewed: LanceDB keeps memory for each table version a
 * connection has seen until the connection is closed, so after renewAfterVersions versions the
 * table is opened on a new connection. Each operation keeps the connection it started on until
 * it ends; a replaced one is closed when the last of them ends.
 */
import type { Table } from "@lancedb/lancedb";
import type { Logger } from "../logger.ts";
import { reopenChunkTable, type OpenTable } from "./lancedb-table.ts";

/** An open table and the operations still using it: a replaced one is closed when they end. */
type Handle = OpenTable & { users: number; retired: boolean; since: number };

export interface RenewOptions {
  /** Table versions (this process's commits and other processes') after which the connection is renewed; 0 for never. */
  renewAfterVersions: number;
  /** How often the table's version is looked at for that. */
  renewCheckMs: number;
  logger?: Pick<Logger, "warn"> | undefined;
}

export class TableConnection {
  /** The first opening; then #current is the table in use. */
  readonly opened: Promise<OpenTable>;
  #current: Handle | null = null;
  #renewing = false;
  #renewTimer: NodeJS.Timeout | null = null;
  /** Connections opened on the table, the first included. */
  #connections = 1;
  readonly #options: RenewOptions;

  constructor(opening: Promise<OpenTable>, options: RenewOptions) {
    this.#options = options;
    this.opened = opening.then(async (opened) => {
      this.#current = { ...opened, users: 0, retired: false, since: await opened.table.version() };
      return opened;
    });
    this.opened.catch(() => {}); // reported by the first call that awaits it
    if (options.renewAfterVersions > 0) {
      this.#renewTimer = setInterval(() => void this.renewIfDue(), options.renewCheckMs);
      this.#renewTimer.unref();
    }
  }

  /** Connections opened on the table so far, the first included. */
  get connections(): number {
    return this.#connections;
  }

  /** Runs `use` on the table; the connection it was given is not closed before `use` ends. */
  async with<T>(use: (table: Table) => Promise<T>): Promise<T> {
    const handle = await this.#acquire();
    try {
      return await use(handle.table);
    } finally {
      release(handle);
    }
  }

  async *withEach<T>(use: (table: Table) => AsyncGenerator<T>): AsyncGenerator<T> {
    const handle = await this.#acquire();
    try {
      yield* use(handle.table);
    } finally {
      release(handle);
    }
  }

  /** The table in use, counted as used: taken in the same step as it is read, so never one closed meanwhile. */
  async #acquire(): Promise<Handle> {
    await this.opened;
    const handle = this.#current!;
    handle.users += 1;
    return handle;
  }

  /**
   * Opens the table on a new connection once the current one has seen renewAfterVersions
   * versions; the old one is closed when the operations using it end. Fails quietly: the
   * current connection stays, and the next check tries again.
   */
  async renewIfDue(): Promise<void> {
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

  /** No renewal from now on. */
  stopRenewing(): void {
    if (this.#renewTimer) clearInterval(this.#renewTimer);
    this.#renewTimer = null;
  }

  /** Closes the connection in use once the operations using it end. */
  async close(): Promise<void> {
    this.stopRenewing();
    const opened = await this.opened.then(
      () => this.#current,
      () => null,
    );
    if (opened && !opened.retired) {
      opened.retired = true;
      if (opened.users === 0) closeHandle(opened);
    }
  }
}

function release(handle: Handle): void {
  handle.users -= 1;
  if (handle.retired && handle.users === 0) closeHandle(handle);
}

function closeHandle(handle: Handle): void {
  handle.table.close();
  handle.db.close();
}
