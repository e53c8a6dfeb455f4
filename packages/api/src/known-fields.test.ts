import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteCatalog } from "@docstore/shared/catalog/sqlite";
import { CATALOG_SCHEMA, openDatabase } from "@docstore/shared/sqlite/db";
import type { Metadata } from "@docstore/shared";
import { KnownFields } from "./known-fields.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A real catalog in a new folder. */
function catalog(): SqliteCatalog {
  const dir = mkdtempSync(path.join(os.tmpdir(), "docstore-fields-"));
  dirs.push(dir);
  return new SqliteCatalog(openDatabase(path.join(dir, "catalog.sqlite"), CATALOG_SCHEMA));
}

async function accept(c: SqliteCatalog, collection: string, metadata: Metadata) {
  const docId = randomUUID();
  await c.accept({
    collection,
    docId,
    jobId: randomUUID(),
    metadata,
    filename: `${docId}.txt`,
    contentType: "text/plain",
    blobKey: `${collection}/${docId}`,
    size: 1,
    sha256: "ab".repeat(32),
  });
}

describe("KnownFields", () => {
  it("answers from what it read until ttlMs has passed, and reads afresh when asked", async () => {
    const c = catalog();
    let now = 1_000;
    const known = new KnownFields(c, { ttlMs: 5_000, now: () => now });
    await accept(c, "kb", { status: "open" });
    expect(await known.of(["kb"])).toEqual(new Set(["status"]));
    await accept(c, "kb", { owner: "ann" });
    // Held: the field added since is not there yet, unless asked afresh.
    expect(await known.of(["kb"])).toEqual(new Set(["status"]));
    expect(await known.of(["kb"], { fresh: true })).toEqual(new Set(["status", "owner"]));
    await accept(c, "kb", { colour: "red" });
    now += 4_999;
    expect(await known.of(["kb"])).toEqual(new Set(["status", "owner"]));
    now += 1;
    expect(await known.of(["kb"])).toEqual(new Set(["status", "owner", "colour"]));
    c.close();
  });

  it("holds each set of collections apart, and forgets every set with a deleted collection", async () => {
    const c = catalog();
    const known = new KnownFields(c, { ttlMs: 60_000 });
    await accept(c, "a", { x: 1 });
    await accept(c, "b", { y: 1 });
    expect(await known.of(["a"])).toEqual(new Set(["x"]));
    expect(await known.of(["a", "b"])).toEqual(new Set(["x", "y"]));
    expect(await known.of(["b"])).toEqual(new Set(["y"]));
    await c.deleteCollection("a");
    await accept(c, "a", { z: 1 });
    known.forget("a");
    expect(await known.of(["a"])).toEqual(new Set(["z"]));
    expect(await known.of(["a", "b"])).toEqual(new Set(["y", "z"]));
    await accept(c, "b", { w: 1 });
    // A set without the deleted collection is still held.
    expect(await known.of(["b"])).toEqual(new Set(["y"]));
    c.close();
  });

  it("keeps no set read while a collection was being forgotten", async () => {
    const c = catalog();
    await accept(c, "a", { x: 1 });
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The real catalog, read at once, its answer handed over only after the deletion below.
    const slow = {
      metadataFields: async (names: readonly string[]) => {
        const fields = await c.metadataFields(names);
        await gate;
        return fields;
      },
    };
    const known = new KnownFields(slow, { ttlMs: 60_000 });
    const old = known.of(["a"]);
    await c.deleteCollection("a");
    known.forget("a");
    release();
    expect(await old).toEqual(new Set(["x"]));
    await accept(c, "a", { y: 1 });
    expect(await known.of(["a"])).toEqual(new Set(["y"]));
    c.close();
  });
});
