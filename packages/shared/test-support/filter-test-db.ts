import Database from "better-sqlite3";
import type { Metadata } from "../src/domain/metadata.ts";
import type { Filter } from "../src/filter/ast.ts";
import { compileToSql } from "../src/filter/sql.ts";
import { registerFilterFunctions } from "../src/filter/sql-functions.ts";

/** Test support: the SQL compiler over a real in-memory table `d(id, metadata)`. */
export class FilterTestDb {
  readonly db = new Database(":memory:");

  constructor() {
    registerFilterFunctions(this.db);
    this.db.exec("CREATE TABLE d (id INTEGER PRIMARY KEY, metadata TEXT NOT NULL)");
  }

  /** Replaces the rows with `docs`, ids 1..n in order. */
  load(docs: readonly Metadata[]): void {
    const insert = this.db.prepare("INSERT INTO d (id, metadata) VALUES (?, ?)");
    this.db.transaction(() => {
      this.db.exec("DELETE FROM d");
      docs.forEach((doc, i) => insert.run(i + 1, JSON.stringify(doc)));
    })();
  }

  /** Ids of the matching rows, in the filter's order, ties by id. */
  select(filter: Filter): number[] {
    const sql = compileToSql(filter, { metadataColumn: "d.metadata" });
    const order = [...sql.orderBy, "d.id"].join(", ");
    const rows = this.db
      .prepare(`SELECT d.id FROM d WHERE ${sql.where} ORDER BY ${order}`)
      .all(...sql.params, ...sql.orderParams) as { id: number }[];
    return rows.map((r) => r.id);
  }

  close(): void {
    this.db.close();
  }
}
