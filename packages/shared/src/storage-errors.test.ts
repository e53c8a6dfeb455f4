import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { StorageError } from "./errors.ts";
import { storageError, writing } from "./storage-errors.ts";

/** What each library throws, as it throws it (LanceDB's message as seen on a full tmpfs and a read-only one). */
const REFUSALS: [string, unknown, StorageError["reason"], string][] = [
  ["fs: ENOSPC", Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }), "full", "ENOSPC"],
  ["fs: EDQUOT", Object.assign(new Error("EDQUOT: disk quota exceeded, write"), { code: "EDQUOT" }), "full", "EDQUOT"],
  ["fs: EROFS", Object.assign(new Error("EROFS: read-only file system, open"), { code: "EROFS" }), "read-only", "EROFS"],
  ["fs: EACCES", Object.assign(new Error("EACCES: permission denied, open"), { code: "EACCES" }), "read-only", "EACCES"],
  ["SQLite: SQLITE_FULL", Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }), "full", "SQLITE_FULL"],
  [
    "SQLite: SQLITE_READONLY_DIRECTORY",
    Object.assign(new Error("attempt to write a readonly database"), { code: "SQLITE_READONLY_DIRECTORY" }),
    "read-only",
    "SQLITE_READONLY",
  ],
  [
    "LanceDB: no space",
    new Error(
      "lance error: LanceError(IO): No space left on device (os error 28), /usr/local/cargo/registry/src/lance-file-12.0.0/src/writer/structural.rs:255:9",
    ),
    "full",
    "ENOSPC",
  ],
  [
    "LanceDB: read-only",
    new Error('lance error: LanceError(IO): Read-only file system (os error 30) at path "/data/index/chunks.lance/data/.tmpH2EgSU"'),
    "read-only",
    "EROFS",
  ],
];

describe("storageError", () => {
  it.each(REFUSALS)("%s", (_, err, reason, code) => {
    const found = storageError(err, "index/");
    expect(found).toBeInstanceOf(StorageError);
    expect(found!.reason).toBe(reason);
    expect(found!.kind).toBe(reason === "full" ? "insufficient_storage" : "unavailable");
    expect(found!.message).toContain(`, ${code})`);
    expect(found!.message).toContain("index/");
    expect(found!.cause).toBe(err);
  });

  it("leaves other failures alone", () => {
    for (const err of [
      Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" }),
      Object.assign(new Error("ENOENT: no such file or directory"), { code: "ENOENT" }),
      new Error("lance error: Commit conflict for version 7"),
      "a string",
      null,
    ]) {
      expect(storageError(err, "catalog.sqlite")).toBeNull();
    }
  });

  it("names the cause for a client: no space under DATA_DIR, or what cannot be written", () => {
    expect(storageError(Object.assign(new Error("x"), { code: "SQLITE_FULL" }), "catalog.sqlite")!.message).toBe(
      "no space left under DATA_DIR (catalog.sqlite: database or disk is full, SQLITE_FULL); free space or grow the volume, then retry",
    );
    expect(storageError(Object.assign(new Error("x"), { code: "EROFS" }), "index/")!.message).toBe(
      "storage unavailable: index/ under DATA_DIR cannot be written (read-only file system, EROFS)",
    );
  });
});

describe("writing", () => {
  it("throws what a real read-only SQLite database refuses as a StorageError, and passes other errors through", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "storage-errors-"));
    try {
      const file = path.join(dir, "t.sqlite");
      await writeFile(file, "");
      const made = new Database(file);
      made.exec("CREATE TABLE t (x)");
      made.close();
      const db = new Database(file, { readonly: true });
      expect(() => writing("t.sqlite", () => db.exec("INSERT INTO t VALUES (1)"))).toThrow(StorageError);
      expect(() => writing("t.sqlite", () => db.exec("INSERT INTO nowhere VALUES (1)"))).toThrow(/no such table/);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
