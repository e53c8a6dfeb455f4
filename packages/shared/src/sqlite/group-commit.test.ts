import { describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { GroupCommit } from "./group-commit.ts";
import { StorageError } from "../errors.ts";

function setup() {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE t (v INTEGER NOT NULL UNIQUE)");
  const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
  const count = () => (db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n;
  const commit = new GroupCommit(db);
  const run = (v: number) => commit.run(() => insert.run(v).changes);
  return { db, run, count };
}

describe("GroupCommit", () => {
  it("runs writes of one event-loop turn together and resolves each", async () => {
    const { run, count } = setup();
    expect(await Promise.all([1, 2, 3].map(run))).toEqual([1, 1, 1]);
    expect(count()).toBe(3);
  });

  it("fails only the write that fails, keeping the others", async () => {
    const { run, count } = setup();
    const results = await Promise.allSettled([run(1), run(1), run(2)]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(count()).toBe(2);
  });

  it("fails every write of a group SQLite refuses for lack of space, keeping none, and takes writes again once there is room", async () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (v BLOB NOT NULL)");
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    const count = () => (db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n;
    const commit = new GroupCommit(db);
    const run = (bytes: number) => commit.run(() => insert.run(Buffer.alloc(bytes)).changes);
    // A database that may not grow past its pages: SQLite's own SQLITE_FULL, as on a full disk.
    const pages = (db.pragma("page_count", { simple: true }) as number) + 8;
    db.pragma(`max_page_count = ${pages}`);
    // Alone, each small write would fit; together with the large one, the group does not.
    const results = await Promise.allSettled([run(100), run(200_000), run(100)]);
    for (const r of results) {
      expect(r.status).toBe("rejected");
      const err = (r as PromiseRejectedResult).reason;
      expect(err).toBeInstanceOf(StorageError);
      expect(err.message).toMatch(/^no space left under DATA_DIR \(:memory:: database or disk is full, SQLITE_FULL\)/);
    }
    expect(count()).toBe(0);
    expect(await Promise.all([run(100), run(100)])).toEqual([1, 1]);
    db.pragma("max_page_count = 1073741823");
    expect(await run(200_000)).toBe(1);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
  });

  it("rejects writes once the database is closed", async () => {
    const { db, run } = setup();
    const pending = run(1);
    db.close();
    await expect(pending).rejects.toThrow(/closed/);
  });
});
