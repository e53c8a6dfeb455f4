import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { CHECKPOINT_WAIT_MS, checkpoint, openDatabase, walBytes, type Db } from "./db.ts";

const SCHEMA = { name: "test", migrations: ["CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, data BLOB NOT NULL)"] };
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Writes 24 MB in 64 KB transactions while another thread reads without pause; returns the largest WAL seen. */
async function loadWhileReading(maintain: (db: Db) => void): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), "docstore-wal-"));
  dirs.push(dir);
  const file = path.join(dir, "catalog.sqlite");
  const writer = openDatabase(file, SCHEMA, { checkpoint: "external" });
  const maintainer = openDatabase(file, SCHEMA);
  const reader = new Worker(
    `const Database = require(${JSON.stringify(require.resolve("better-sqlite3"))});
     const db = new Database(${JSON.stringify(file)}); db.pragma("busy_timeout = 10000");
     const { parentPort } = require("node:worker_threads");
     let run = true; parentPort.on("message", () => { run = false; });
     (function loop() { for (let i = 0; i < 50; i++) db.prepare("SELECT count(*), sum(length(data)) FROM t").get(); if (run) setImmediate(loop); else { db.close(); parentPort.postMessage("done"); } })();`,
    { eval: true },
  );
  const insert = writer.prepare("INSERT INTO t (data) VALUES (?)");
  let largest = 0;
  for (let i = 0; i < 384; i++) {
    insert.run(Buffer.alloc(64 * 1024, i));
    if (i % 8 === 7) maintain(maintainer);
    largest = Math.max(largest, walBytes(writer));
    await new Promise((r) => setImmediate(r));
  }
  const done = new Promise((r) => reader.once("message", r));
  reader.postMessage("stop");
  await done;
  writer.close();
  maintainer.close();
  return largest;
}

const require = (await import("node:module")).createRequire(import.meta.url);

describe("WAL checkpoints under a continuous load", () => {
  it("keep the WAL file near its limit while a reader never stops", async () => {
    const limit = 2 * 1024 * 1024;
    const largest = await loadWhileReading((db) => checkpoint(db, limit));
    // One checkpoint interval (8 x 64 KB of pages) past the limit at most.
    expect(largest).toBeLessThan(limit + 1.5 * 1024 * 1024);
  }, 60_000);

  it("give up when a reader holds an old snapshot, before a write waiting behind them times out", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "docstore-wal-"));
    dirs.push(dir);
    const file = path.join(dir, "catalog.sqlite");
    const writer = openDatabase(file, SCHEMA, { checkpoint: "external" });
    const maintainer = openDatabase(file, SCHEMA);
    const reader = openDatabase(file, SCHEMA);
    const insert = writer.prepare("INSERT INTO t (data) VALUES (?)");
    for (let i = 0; i < 8; i++) insert.run(Buffer.alloc(64 * 1024, i));
    // A read transaction on the snapshot of now, then more writes: the WAL cannot be emptied while it lasts.
    reader.prepare("BEGIN").run();
    reader.prepare("SELECT count(*) FROM t").get();
    for (let i = 0; i < 8; i++) insert.run(Buffer.alloc(64 * 1024, i));
    // Another thread writes while the checkpoint below waits for the reader (this thread is
    // held by it meanwhile), willing to wait three times as long as the checkpoint may.
    const other = new Worker(
      `const Database = require(${JSON.stringify(require.resolve("better-sqlite3"))});
       const { parentPort } = require("node:worker_threads");
       const db = new Database(${JSON.stringify(file)}); db.pragma("busy_timeout = ${3 * CHECKPOINT_WAIT_MS}");
       parentPort.once("message", () => setTimeout(() => {
         try { db.prepare("INSERT INTO t (data) VALUES (x'00')").run(); parentPort.postMessage("written"); }
         catch (err) { parentPort.postMessage(String(err.code)); }
         db.close();
       }, 100));`,
      { eval: true },
    );
    await new Promise((r) => other.once("online", r));
    const outcome = new Promise((r) => other.once("message", r));
    other.postMessage("go");
    checkpoint(maintainer, 0);
    expect(await outcome).toBe("written");
    expect(walBytes(writer)).toBeGreaterThan(0);
    // Once the reader is done, the next checkpoint empties the WAL.
    reader.prepare("COMMIT").run();
    checkpoint(maintainer, 0);
    expect(walBytes(writer)).toBe(0);
    for (const db of [writer, maintainer, reader]) db.close();
    await other.terminate();
  }, 60_000);
});
