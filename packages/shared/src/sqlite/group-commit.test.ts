import { describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { GroupCommit } from "./group-commit.ts";

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

  it("rejects writes once the database is closed", async () => {
    const { db, run } = setup();
    const pending = run(1);
    db.close();
    await expect(pending).rejects.toThrow(/closed/);
  });
});
