/**
 * Versioned schemas for SQLite files: a file's `PRAGMA user_version` is the number of its
 * schema's migrations applied to it. Opening a file applies the missing ones in order, each in
 * its own write transaction with the version it leaves, and refuses a file whose version is
 * newer than the code knows (a newer docstore wrote it: its tables may mean something else).
 */
import type Database from "better-sqlite3";
import { ConfigError } from "../errors.ts";

/** One step of a schema: SQL, or a function for a step that must look at what is there first. */
export type Migration = string | ((db: Database.Database) => void);

export interface Schema {
  /** What the file holds, as messages name it ("the catalog"). */
  readonly name: string;
  /**
   * Version n + 1 is what `migrations[n]` makes of version n: a new file runs them all. Append
   * only: a migration released once is never edited, removed or reordered.
   */
  readonly migrations: readonly Migration[];
}

/** The version a file written by this code has. */
export const newestVersion = (schema: Schema): number => schema.migrations.length;

/**
 * Brings `db` to the newest version of `schema`. Several connections opening the file at once
 * apply each step once: a step reads the version inside its write transaction. A step that
 * throws leaves the file at the version before it.
 */
export function migrate(db: Database.Database, schema: Schema): void {
  const newest = newestVersion(schema);
  const version = () => db.pragma("user_version", { simple: true }) as number;
  const check = (v: number) => {
    if (v > newest) {
      throw new ConfigError(
        `${db.name}: written by a newer docstore (${schema.name} schema version ${v}; this one knows up to ${newest}); ` +
          `run that version or a later one, or point DATA_DIR at another folder`,
      );
    }
  };
  // Up to date, the usual case: no write lock taken.
  if (version() === newest) return;
  for (;;) {
    const done = db
      .transaction(() => {
        const v = version();
        check(v);
        if (v === newest) return true;
        const step = schema.migrations[v]!;
        if (typeof step === "string") db.exec(step);
        else step(db);
        db.pragma(`user_version = ${v + 1}`);
        return false;
      })
      .immediate();
    if (done) return;
  }
}
