import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import fc from "fast-check";
import { CATALOG_SCHEMA, openDatabase, type Db } from "../sqlite/db.ts";
import { CLAIM_SQL, PENDING_SQL, SqliteCatalog } from "./sqlite.ts";
import { GroupCommit } from "../sqlite/group-commit.ts";
import { describeCatalogContract, newDocument } from "../../test-support/catalog-contract.ts";
import { FIRST_CATALOG_SQL, LAST_UNVERSIONED_BLOBS_SQL } from "../../test-support/old-catalogs.ts";
import { newestVersion } from "../sqlite/migrate.ts";
import { ConfigError } from "../errors.ts";
import { FsBlobStore } from "../blob/fs.ts";
import { tempDirs } from "../../test-support/temp-dirs.ts";

const tempDir = tempDirs("docstore-catalog-");
/** A catalog file in a new folder, removed after the test. */
const catalogFile = () => path.join(tempDir(), "catalog.sqlite");

describeCatalogContract("SqliteCatalog", async () => {
  const catalog = new SqliteCatalog(openDatabase(catalogFile(), CATALOG_SCHEMA));
  return { catalog, cleanup: () => catalog.close() };
});

describe("SqliteCatalog's counts per collection", () => {
  /** What the counts must be: an aggregate over every document. */
  const counted = (db: Db) =>
    db
      .prepare(
        `SELECT c.name AS name, count(d.id) AS documents, coalesce(sum(d.status = 'ready'), 0) AS ready,
         coalesce(sum(d.status IN ('queued', 'processing')), 0) AS pending, coalesce(sum(d.status = 'failed'), 0) AS failed
       FROM collections c LEFT JOIN documents d ON d.collection = c.name GROUP BY c.name ORDER BY c.name`,
      )
      .all();

  it("agree with the documents after any sequence of accepts, marks, rollbacks and deletes", async () => {
    const db = openDatabase(catalogFile(), CATALOG_SCHEMA);
    const catalog = new SqliteCatalog(db);
    const op = fc.tuple(fc.integer({ min: 0, max: 6 }), fc.constantFrom("a", "b"), fc.integer({ min: 0, max: 5 }));
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        db.exec("DELETE FROM documents; DELETE FROM collections; DELETE FROM collection_counts");
        for (const [kind, collection, n] of ops) {
          const docId = `d${n}`;
          const current = await catalog.get(collection, docId);
          if (kind === 0 || kind === 1) {
            const { record, previous } = await catalog.accept(newDocument(collection, docId));
            if (kind === 1) await catalog.rollback(record, previous);
          } else if (kind === 2 && current) await catalog.markReady(collection, docId, current.version, 1);
          else if (kind === 3 && current) await catalog.markFailed(collection, docId, current.version, "no");
          else if (kind === 4) await catalog.claimQueued(2);
          else if (kind === 5) await catalog.delete(collection, docId);
          else if (kind === 6 && n === 0) await catalog.deleteCollection(collection);
        }
        expect(await catalog.listCollections()).toEqual(counted(db));
      }),
      { numRuns: 60 },
    );
    await catalog.close();
  });

  it("are filled in for a catalog made before they were kept", async () => {
    const file = catalogFile();
    const before = new SqliteCatalog(openDatabase(file, CATALOG_SCHEMA));
    for (const docId of ["x", "y", "z"]) await before.accept(newDocument("old", docId));
    await before.markFailed("old", "z", 1, "broken");
    await before.close();
    const older = new Database(file);
    older.exec(
      "DROP TRIGGER documents_counted_insert; DROP TRIGGER documents_counted_delete; DROP TRIGGER documents_counted_update; DROP TABLE collection_counts",
    );
    older.pragma("user_version = 0"); // as every catalog from before schema versions
    older.close();

    const db = openDatabase(file, CATALOG_SCHEMA);
    const catalog = new SqliteCatalog(db);
    expect(await catalog.listCollections()).toEqual([{ name: "old", documents: 3, ready: 0, pending: 2, failed: 1 }]);
    await catalog.accept(newDocument("old", "w"));
    expect(await catalog.listCollections()).toEqual(counted(db));
    await catalog.close();
  });
});

describe("SqliteCatalog's accepts in one transaction", () => {
  it("record every collection and metadata key, again after a rollback of the same transaction dropped them", async () => {
    const db = openDatabase(catalogFile(), CATALOG_SCHEMA);
    const commit = new GroupCommit(db);
    const catalog = new SqliteCatalog(db, commit);
    const x = newDocument("c", "x", { metadata: { a: 1 } });
    // Submitted in one turn: one transaction. The rollback empties "c", which drops it and its keys.
    const writes = [
      catalog.accept(x),
      catalog.accept(newDocument("d", "w", { metadata: { p: 1 } })),
      catalog.rollback({ ...x, version: 1, status: "queued", chunks: 0, error: null, createdAt: "", updatedAt: "" }, null),
      catalog.accept(newDocument("c", "y", { metadata: { a: 2 } })),
      catalog.accept(newDocument("d", "v", { metadata: { p: 2, q: 3 } })),
      catalog.accept(newDocument("c", "z", { metadata: { a: 3, b: 4 } })),
    ];
    await Promise.all(writes);
    // Not retried one by one, as a failed group would be (an accept that skipped re-adding
    // "c" would fail its foreign key).
    expect(commit.transaction).toBe(1);
    expect((await catalog.listDocuments("c", 10, null)).items.map((d) => d.docId)).toEqual(["y", "z"]);
    expect([...(await catalog.metadataFields(["c"]))].sort()).toEqual(["a", "b"]);
    expect([...(await catalog.metadataFields(["d"]))].sort()).toEqual(["p", "q"]);
    expect((await catalog.listCollections()).map((k) => [k.name, k.documents])).toEqual([
      ["c", 2],
      ["d", 2],
    ]);
    const stored = db
      .prepare("SELECT DISTINCT d.collection || '/' || j.key AS f FROM documents d, json_each(d.metadata) j ORDER BY f")
      .all();
    expect(stored).toEqual(db.prepare("SELECT collection || '/' || field AS f FROM collection_fields ORDER BY f").all());
    await catalog.close();
  });
});

describe("SqliteCatalog's pending documents", () => {
  it("are found through a partial index of pending rows, not by reading every document", async () => {
    const db = openDatabase(catalogFile(), CATALOG_SCHEMA);
    try {
      const catalog = new SqliteCatalog(db);
      for (let i = 0; i < 50; i++) await catalog.accept(newDocument("c", `d${i}`));
      db.exec("ANALYZE");
      const plan = (cursor: boolean) =>
        db
          .prepare(`EXPLAIN QUERY PLAN ${PENDING_SQL}`)
          .all({ before: "9999", at: cursor ? "2000" : "", id: 0, limit: 10 })
          .map((r) => (r as { detail: string }).detail)
          .join("; ");
      for (const cursor of [false, true]) {
        expect(plan(cursor)).toMatch(/USING INDEX documents_pending_age/);
        expect(plan(cursor)).not.toMatch(/SCAN documents(?! USING)/);
        expect(plan(cursor)).not.toMatch(/TEMP B-TREE/);
      }
      expect((await catalog.listPending("9999", 100, null)).items).toHaveLength(50);
    } finally {
      db.close();
    }
  });
});

describe("SqliteCatalog's queue claims", () => {
  it("take queued documents in order, up to a count and a total size; a larger one alone", async () => {
    const db = openDatabase(catalogFile(), CATALOG_SCHEMA);
    const catalog = new SqliteCatalog(db);
    try {
      for (const [i, size] of [10, 20, 30, 40, 5, 5, 5].entries()) await catalog.accept(newDocument("c", `d${i}`, { size }));
      const claim = async (limit: number, maxBytes?: number) => (await catalog.claimQueued(limit, maxBytes)).map((j) => j.docId).sort();
      expect(await claim(10, 35)).toEqual(["d0", "d1"]); // 10 + 20; with 30 more, 60
      expect(await claim(10, 35)).toEqual(["d2"]);
      expect(await claim(10, 35)).toEqual(["d3"]); // 40 > 35, claimed alone
      expect(await claim(2)).toEqual(["d4", "d5"]);
      expect(await claim(10, 35)).toEqual(["d6"]);
      expect(await claim(10, 35)).toEqual([]);
      const statuses = db.prepare("SELECT status, count(*) AS n FROM documents GROUP BY status").all();
      expect(statuses).toEqual([{ status: "processing", n: 7 }]);
    } finally {
      await catalog.close();
    }
  });

  it("wait for another connection's write lock without holding up the event loop, then take the rows", async () => {
    const file = catalogFile();
    const catalog = new SqliteCatalog(openDatabase(file, CATALOG_SCHEMA));
    const other = openDatabase(file, CATALOG_SCHEMA);
    try {
      await catalog.accept(newDocument("c", "d0"));
      other.exec("BEGIN IMMEDIATE"); // another thread's write transaction, holding the lock
      let turns = 0;
      const ticking = setInterval(() => turns++, 1);
      const claimed = catalog.claimQueued(10);
      await new Promise((r) => setTimeout(r, 100));
      const turnsWhileHeld = turns;
      other.exec("COMMIT");
      const jobs = await claimed;
      clearInterval(ticking);
      // SQLite's busy handler would have slept in this thread all the while.
      expect(turnsWhileHeld).toBeGreaterThan(10);
      expect(jobs.map((j) => j.docId)).toEqual(["d0"]);
    } finally {
      other.close();
      await catalog.close();
    }
  });

  it("read the queue through its partial index, not every document", async () => {
    const db = openDatabase(catalogFile(), CATALOG_SCHEMA);
    const catalog = new SqliteCatalog(db);
    try {
      // Enough rows that SQLite's statistics favour the indexes (on a few dozen it scans).
      for (let i = 0; i < 5000; i++) await catalog.accept(newDocument("c", `d${i}`));
      db.exec("ANALYZE");
      const plan = db
        .prepare(`EXPLAIN QUERY PLAN ${CLAIM_SQL}`)
        .all("2000", 10, 1000)
        .map((r) => (r as { detail: string }).detail)
        .join("; ");
      expect(plan).toMatch(/SEARCH documents USING INTEGER PRIMARY KEY/);
      expect(plan).toMatch(/USING INDEX documents_queued/);
      expect(plan).not.toMatch(/SCAN documents(?! USING)/);
    } finally {
      await catalog.close();
    }
  });
});

describe("SqliteCatalog opening a catalog an older docstore wrote", () => {
  let file: string;
  beforeEach(() => {
    file = catalogFile();
  });

  /** Rows as the old code inserted them: a queued, a ready and a failed document in "old", one in "other". */
  function fillOld(db: Db): void {
    const t = "2026-11-21T10:00:00.000Z";
    db.prepare("INSERT INTO collections (name, created_at) VALUES (?, ?), (?, ?)").run("old", t, "other", t);
    const insert = db.prepare(
      `INSERT INTO documents (collection, doc_id, version, job_id, status, metadata, filename, content_type, blob_key, size, sha256, chunks, error, queued_seq, created_at, updated_at)
       VALUES (?, ?, 1, ?, ?, ?, NULL, 'text/plain', ?, 5, 'abc', ?, ?, ?, ?, ?)`,
    );
    insert.run("old", "q", "j1", "queued", '{"team":"a"}', "old/q/1", 0, null, 1, t, t);
    insert.run("old", "r", "j2", "ready", '{"year":2024}', "old/r/1", 3, null, 2, t, t);
    insert.run("old", "f", "j3", "failed", "{}", "old/f/1", 0, "broken", 3, t, t);
    insert.run("other", "x", "j4", "ready", '{"kind":"memo"}', "other/x/1", 1, null, 4, t, t);
  }

  const indexes = (db: Db) =>
    db
      .prepare<[], { name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'documents' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all()
      .map((r) => r.name);

  it("opens the first version's (no counts, no fields, the queue index under its old name) migrated, its rows kept", async () => {
    const old = new Database(file);
    old.exec(FIRST_CATALOG_SQL);
    fillOld(old);
    old.close();

    const db = openDatabase(file, CATALOG_SCHEMA);
    expect(db.pragma("user_version", { simple: true })).toBe(newestVersion(CATALOG_SCHEMA));
    expect(indexes(db)).toEqual(["documents_pending_age", "documents_queued"]);
    const catalog = new SqliteCatalog(db);
    expect(await catalog.listCollections()).toEqual([
      { name: "old", documents: 3, ready: 1, pending: 1, failed: 1 },
      { name: "other", documents: 1, ready: 1, pending: 0, failed: 0 },
    ]);
    expect([...(await catalog.metadataFields(["old"]))].sort()).toEqual(["team", "year"]);
    expect(await catalog.get("old", "f")).toMatchObject({ status: "failed", error: "broken", blobKey: "old/f/1", metadata: {} });
    expect((await catalog.claimQueued(10)).map((j) => j.docId)).toEqual(["q"]);
    await catalog.accept(newDocument("old", "new", { metadata: { extra: true } }));
    expect((await catalog.listCollections())[0]).toEqual({ name: "old", documents: 4, ready: 1, pending: 2, failed: 1 });
    await catalog.close();
  });

  it("opens the last unversioned release's, with its small blobs, migrated and readable", async () => {
    const old = new Database(file);
    old.exec(CATALOG_SCHEMA.migrations[0] as string);
    old.exec(LAST_UNVERSIONED_BLOBS_SQL);
    fillOld(old);
    old.prepare("INSERT INTO blobs (key, data, enc) VALUES (?, ?, 0)").run("old/q/1", Buffer.from("hello"));
    old.close();

    const db = openDatabase(file, CATALOG_SCHEMA);
    expect(db.pragma("user_version", { simple: true })).toBe(newestVersion(CATALOG_SCHEMA));
    const catalog = new SqliteCatalog(db);
    expect((await catalog.listCollections()).map((c) => [c.name, c.documents])).toEqual([
      ["old", 3],
      ["other", 1],
    ]);
    expect([...(await catalog.metadataFields(["other"]))]).toEqual(["kind"]);
    const blobs = new FsBlobStore(path.join(path.dirname(file), "blobs"), { shared: { db, commit: new GroupCommit(db) } });
    expect(Buffer.from(await blobs.get("old/q/1")).toString()).toBe("hello");
    await catalog.close();
  });

  it("refuses a catalog a newer docstore wrote, and leaves it as it is", () => {
    const db = openDatabase(file, CATALOG_SCHEMA);
    const newer = newestVersion(CATALOG_SCHEMA) + 1;
    db.pragma(`user_version = ${newer}`);
    db.close();
    expect(() => openDatabase(file, CATALOG_SCHEMA)).toThrow(ConfigError);
    expect(() => openDatabase(file, CATALOG_SCHEMA)).toThrow(`catalog schema version ${newer}; this one knows up to ${newer - 1}`);
    const after = new Database(file);
    expect(after.pragma("user_version", { simple: true })).toBe(newer);
    after.close();
  });
});
