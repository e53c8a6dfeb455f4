import path from "node:path";
import Database from "better-sqlite3";
import { Worker } from "node:worker_threads";
import { beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../errors.ts";
import { openDatabase, type Db } from "./db.ts";
import type { Schema } from "./migrate.ts";
import { tempDirs } from "../../test-support/temp-dirs.ts";

/** Three steps, each leaving its number in `log`: what ran, in which order. */
const STEPS = [
  "CREATE TABLE log (step INTEGER); CREATE TABLE t (a TEXT); INSERT INTO log VALUES (1)",
  "ALTER TABLE t ADD COLUMN b TEXT NOT NULL DEFAULT 'b'; INSERT INTO log VALUES (2)",
  (db: Db) => {
    db.prepare("UPDATE t SET b = upper(b)").run();
    db.exec("INSERT INTO log VALUES (3)");
  },
];
const schema = (n: number): Schema => ({ name: "test", migrations: STEPS.slice(0, n) });
const version = (db: Db) => db.pragma("user_version", { simple: true }) as number;
const log = (db: Db) =>
  db
    .prepare<[], { step: number }>("SELECT step FROM log")
    .all()
    .map((r) => r.step);

describe("openDatabase's migrations", () => {
  const tempDir = tempDirs("docstore-migrate-");
  let file: string;
  beforeEach(() => {
    file = path.join(tempDir(), "test.sqlite");
  });

  it("runs every step on a new file, and none on a file up to date", () => {
    const db = openDatabase(file, schema(3));
    expect(version(db)).toBe(3);
    expect(log(db)).toEqual([1, 2, 3]);
    db.close();
    const again = openDatabase(file, schema(3));
    expect(log(again)).toEqual([1, 2, 3]);
    again.close();
  });

  it("runs only the steps a file of an older version lacks, in order, keeping its rows", () => {
    const old = openDatabase(file, schema(1));
    old.exec("INSERT INTO t (a) VALUES ('kept')");
    old.close();
    const db = openDatabase(file, schema(3));
    expect(version(db)).toBe(3);
    expect(log(db)).toEqual([1, 2, 3]);
    expect(db.prepare("SELECT a, b FROM t").all()).toEqual([{ a: "kept", b: "B" }]);
    db.close();
  });

  it("leaves a file at the version before a step that fails, the earlier steps kept", () => {
    openDatabase(file, schema(1)).close();
    const broken: Schema = { name: "test", migrations: [STEPS[0]!, STEPS[1]!, "INSERT INTO log VALUES (3); SELECT no_such_function()"] };
    expect(() => openDatabase(file, broken)).toThrow(/no_such_function/);
    const db = new Database(file);
    expect(version(db)).toBe(2);
    expect(log(db)).toEqual([1, 2]);
    db.close();
  });

  it("refuses a file of a newer version than it knows, and changes nothing in it", () => {
    const newer = openDatabase(file, schema(3));
    newer.exec("INSERT INTO t (a) VALUES ('x')");
    newer.close();
    let refused: unknown;
    try {
      openDatabase(file, schema(2));
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toBe(
      `${file}: written by a newer docstore (test schema version 3; this one knows up to 2); run that version or a later one, or point DATA_DIR at another folder`,
    );
    const db = new Database(file);
    expect([version(db), log(db), db.prepare("SELECT count(*) AS n FROM t").get()]).toEqual([3, [1, 2, 3], { n: 1 }]);
    db.close();
  });

  it("applies each step once when threads open an old file at the same moment", async () => {
    openDatabase(file, schema(1)).close();
    // Each thread waits for the others, then opens the file with steps 2 and 3, step 2 slowed
    // down (a count to three million in SQL) so that the openings overlap.
    const code = `
      const { workerData, parentPort } = require("node:worker_threads");
      import(workerData.db).then(({ openDatabase }) => {
        const slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) FROM c;";
        const steps = [${JSON.stringify(STEPS[0])}, slow + ${JSON.stringify(STEPS[1])}, "UPDATE t SET b = upper(b); INSERT INTO log VALUES (3)"];
        const ready = new Int32Array(workerData.ready);
        Atomics.add(ready, 0, 1);
        while (Atomics.load(ready, 0) < workerData.threads) Atomics.wait(ready, 0, Atomics.load(ready, 0), 5);
        openDatabase(workerData.file, { name: "test", migrations: steps }).close();
        parentPort.postMessage("opened");
      }, (err) => parentPort.postMessage(String(err)));`;
    const threads = 4;
    const ready = new SharedArrayBuffer(4);
    const db = new URL("./db.ts", import.meta.url).href;
    const answers = await Promise.all(
      Array.from({ length: threads }, () => {
        const worker = new Worker(code, { eval: true, workerData: { db, file, ready, threads } });
        return new Promise<unknown>((resolve, reject) => {
          worker.once("message", (m) => void worker.terminate().then(() => resolve(m)));
          worker.once("error", reject);
        });
      }),
    );
    expect(answers).toEqual(Array(threads).fill("opened"));
    const after = new Database(file);
    expect([version(after), log(after)]).toEqual([3, [1, 2, 3]]);
    after.close();
  });
});
