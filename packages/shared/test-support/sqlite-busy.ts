import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";

/** The error SQLite gives a write while another connection holds the write lock (with no busy wait). */
export function sqliteBusyError(): Error {
  const dir = mkdtempSync(path.join(tmpdir(), "docstore-busy-"));
  const file = path.join(dir, "busy.sqlite");
  const holder = new Database(file);
  const writer = new Database(file);
  try {
    holder.exec("CREATE TABLE t (x)");
    writer.pragma("busy_timeout = 0");
    holder.exec("BEGIN IMMEDIATE");
    writer.exec("INSERT INTO t VALUES (1)");
  } catch (err) {
    return err as Error;
  } finally {
    holder.close();
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  }
  throw new Error("the write was not refused");
}
