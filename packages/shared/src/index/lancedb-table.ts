/**
 * Opening the chunk table: made on first use with its indexes, shared by every process on the
 * host that opens the same directory. Reads check for newer versions on every query
 * (`readConsistencyInterval: 0`), so what another process committed is seen at once.
 */
import { connect, Index, Session, type Connection, type Table } from "@lancedb/lancedb";
import { setTimeout } from "node:timers/promises";
import type { FixedSizeList } from "apache-arrow";
import { HIT_COLUMN, TABLE_NAME, hitSql, tableSchema } from "./lancedb-rows.ts";
import { ConfigError } from "../errors.ts";

export interface OpenTable {
  db: Connection;
  table: Table;
  /** Length of the stored vectors, or null when the table keeps none. */
  vectorSize: number | null;
  /** The bound of each connection's caches. */
  cacheBytes: number;
  dir: string;
  /** The table's layout (TABLE_LAYOUT, or 1 for a table made before it). */
  layout: number;
  /** Given each connection's session as it is made (see openChunkTable). */
  watch?: (session: Session) => void;
}

/** The full-text index's name: LanceDB names an index after its column. */
export const TEXT_INDEX = "text_idx";

/**
 * BM25 with English stemming and stopwords, lowercased and ASCII-folded (é matches e, as
 * SQLite's unicode61 did); no positions, as no phrase query is made. Bitmaps for the
 * low-cardinality columns filters, scopes and head rows use; B-trees for the join key of mergeInsert, the
 * document key and the ranges on priority and created.
 */
export const textIndex = () =>
  Index.fts({
    baseTokenizer: "simple",
    language: "English",
    stem: true,
    removeStopWords: true,
    lowercase: true,
    asciiFolding: true,
    withPosition: false,
  });

const INDEXES: [string, () => Index][] = [
  ["text", textIndex],
  ["collection", () => Index.bitmap()],
  // Tag lookups and listings read head rows: without it, LanceDB read `head` for every row the
  // other conditions kept (a tag lookup's query at 200,000 documents: 6.3 ms against 2.9 with it).
  ["head", () => Index.bitmap()],
  ["m_status", () => Index.bitmap()],
  ["m_type", () => Index.bitmap()],
  ["id", () => Index.btree()],
  ["doc_id", () => Index.btree()],
  ["m_priority", () => Index.btree()],
  ["m_created", () => Index.btree()],
];

/**
 * A connection whose caches `cacheBytes` bounds (LanceDB's defaults are 6 GB of index data and
 * 1 GB of file metadata): three quarters for index data, the rest for metadata. The session goes
 * in the options: LanceDB 0.39 ignores one given as connect()'s third argument, and the
 * connection then caches without this bound. The JavaScript session is not kept: it holds the
 * caches too, and, once it has lived long, only a full garbage collection would free them after
 * the connection is closed (V8 does not count them, so nothing hurries that collection).
 */
async function boundedConnection(dir: string, cacheBytes: number, watch: OpenTable["watch"]): Promise<Connection> {
  const session = new Session(BigInt(Math.floor(cacheBytes * 0.75)), BigInt(Math.floor(cacheBytes * 0.25)));
  watch?.(session);
  return connect(dir, { readConsistencyInterval: 0, session });
}

/**
 * Opens (or makes) the chunk table on a connection whose caches `cacheBytes` bounds. `watch`, if
 * given, gets each connection's session, this one's and every reopened one's: a test reads the
 * caches' size through it, and holding it holds them.
 */
export async function openChunkTable(
  dir: string,
  dimensions: number | null,
  cacheBytes: number,
  watch?: OpenTable["watch"],
): Promise<OpenTable> {
  const db = await boundedConnection(dir, cacheBytes, watch);
  const table = await openOrCreate(db, dimensions);
  let layout: number;
  try {
    layout = await knownLayout(table, dir); // before anything is written to it
  } catch (err) {
    table.close();
    db.close();
    throw err;
  }
  await ensureHitColumn(table);
  await ensureIndexes(table);
  const vectorField = (await table.schema()).fields.find((f) => f.name === "vector");
  let vectorSize = vectorField ? (vectorField.type as FixedSizeList).listSize : null;
  if (vectorSize === null && dimensions !== null) {
    // A table made before vectors were configured: its rows get a null vector.
    await table.addColumns([{ name: "vector", valueSql: `arrow_cast(NULL, 'FixedSizeList(${Math.trunc(dimensions)}, Float32)')` }]);
    vectorSize = dimensions;
  }
  return { db, table, vectorSize, cacheBytes, dir, watch, layout };
}

/**
 * The same table on a new connection, with caches of its own under the same bound. LanceDB
 * keeps memory for every table version a connection has seen until the connection is closed
 * (0.39: about 0.1 MiB a version), so a long-running process moves to a new one now and then
 * (lancedb-connection.ts); what the old connection cached goes with it. Caches shared with the new
 * connection would hold stale index data up to the bound for good: in the soak, the API's
 * memory then did not come back down after the load.
 */
export async function reopenChunkTable(opened: OpenTable): Promise<OpenTable> {
  const db = await boundedConnection(opened.dir, opened.cacheBytes, opened.watch);
  try {
    return { ...opened, db, table: await db.openTable(TABLE_NAME) };
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * The layout of a table this code makes: the table's schema version, kept in its schema's
 * metadata. Opening a table of an older layout opens it as it is, a table of a newer one is
 * refused (knownLayout). 1 (no mark): made with
 * stable row ids. Compaction then keeps each row's id and leaves the indexes as they are, so
 * the full-text index goes on ranking the rows that the compaction dropped as deleted (LanceDB
 * 0.39): it takes its top k with them, then drops them, and a search came back short or empty
 * after deletions. 2: row ids are addresses, and a compaction remaps every index, dropping the
 * deleted rows from them (each run that compacts pays for the remap).
 */
export const TABLE_LAYOUT = 2;
export const LAYOUT_KEY = "docstore.table_layout";
const NEW_TABLE = { mode: "create", storageOptions: { newTableEnableStableRowIds: "false" } } as const;

/** The layout of the table (TABLE_LAYOUT), read from its schema. */
export async function tableLayout(table: Table): Promise<number> {
  return Number((await table.schema()).metadata.get(LAYOUT_KEY) ?? 1);
}

/**
 * The table's layout, when this code can work on it: every layout up to TABLE_LAYOUT is read as
 * it is (layout 1 differs only in its row ids, which lancedb.ts allows for). A table a newer
 * docstore made is refused with a ConfigError, before anything is written to it.
 */
async function knownLayout(table: Table, dir: string): Promise<number> {
  const mark = (await table.schema()).metadata.get(LAYOUT_KEY);
  const layout = Number(mark ?? 1);
  if (Number.isInteger(layout) && layout >= 1 && layout <= TABLE_LAYOUT) return layout;
  throw new ConfigError(
    `${dir}: the search index was written by a newer docstore (table layout ${mark}; this one knows up to ${TABLE_LAYOUT}); ` +
      `run that version or a later one, or point DATA_DIR at another folder`,
  );
}

/**
 * Builds the full-text index again from the rows there are: a table of layout 1 does so after a
 * compaction, as its index keeps the rows the compaction dropped.
 */
export async function rebuildTextIndex(table: Table): Promise<void> {
  await table.createIndex("text", { config: textIndex(), replace: true });
}

async function openOrCreate(db: Connection, dimensions: number | null): Promise<Table> {
  for (let attempt = 1; ; attempt++) {
    try {
      // Created without existOk: when two processes create it at once, the second fails (and
      // opens the first one's table on the next attempt) instead of overwriting it.
      return (await db.tableNames()).includes(TABLE_NAME)
        ? await db.openTable(TABLE_NAME)
        : await db.createEmptyTable(TABLE_NAME, tableSchema(dimensions, new Map([[LAYOUT_KEY, String(TABLE_LAYOUT)]])), NEW_TABLE);
    } catch (err) {
      // A table another process is creating is listed before its first version is written,
      // and cannot be opened until then (seen with two instances starting at once).
      if (attempt >= 40) throw err;
      await setTimeout(50);
    }
  }
}

/**
 * Makes what `present` finds missing on the latest version, once. Another process making the
 * same thing, or committing beside it, makes this one's attempt fail: it looks again.
 */
async function ensure(table: Table, present: () => Promise<boolean>, make: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await table.checkoutLatest();
    if (await present()) return;
    try {
      await make();
      return;
    } catch (err) {
      if (attempt >= 20) throw err;
      await setTimeout(25 * attempt);
    }
  }
}

/** A table made before the `hit` column gets it, made from each row's columns (one pass over the table, once). */
async function ensureHitColumn(table: Table): Promise<void> {
  await ensure(
    table,
    async () => (await table.schema()).fields.some((f) => f.name === HIT_COLUMN),
    () => table.addColumns([{ name: HIT_COLUMN, valueSql: hitSql() }]),
  );
}

async function ensureIndexes(table: Table): Promise<void> {
  for (const [column, config] of INDEXES) {
    await ensure(
      table,
      async () => (await table.listIndices()).some((i) => i.columns.includes(column)),
      () => table.createIndex(column, { config: config(), replace: false }),
    );
  }
}
