import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { FsBlobStore } from "./fs.ts";
import { NotFoundError } from "../errors.ts";

let dir: string;
let store: FsBlobStore;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "docstore-blobs-"));
  store = new FsBlobStore(dir);
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function list(prefix: string) {
  const keys = [];
  for await (const key of store.list(prefix)) keys.push(key);
  return keys.sort();
}

describe("FsBlobStore", () => {
  it("keeps small and large blobs byte for byte", async () => {
    const small = new Uint8Array([0, 1, 2, 255]);
    const large = new Uint8Array(200_000).map((_, i) => i % 251);
    await store.put("c1/a/small", small);
    await store.put("c1/b/large", large);
    expect(Buffer.from(await store.get("c1/a/small"))).toEqual(Buffer.from(small));
    expect(Buffer.from(await store.get("c1/b/large"))).toEqual(Buffer.from(large));
    expect(readdirSync(path.join(dir, "files", "c1", "b"))).toEqual(["large"]);
    expect(await list("c1")).toEqual(["c1/a/small", "c1/b/large"]);
  });

  it("deletes one blob, or every blob under a prefix and nothing else", async () => {
    await store.put("c1/x/one", new Uint8Array([1]));
    await store.put("c1/x/big", new Uint8Array(70_000));
    await store.put("c10/x/other", new Uint8Array([2]));
    await store.delete("c1/x/one");
    await expect(store.get("c1/x/one")).rejects.toBeInstanceOf(NotFoundError);
    await store.deletePrefix("c1/");
    expect(await list("c1")).toEqual([]);
    expect(await list("c10")).toEqual(["c10/x/other"]);
  });

  it("stores small blobs as given, and reads those an earlier version stored compressed with DEFLATE", async () => {
    const text = Buffer.from("The heron waded through the marsh at dawn. ".repeat(200));
    const noise = new Uint8Array(randomBytes(4096));
    await store.put("c/text", text);
    await store.put("c/noise", noise);
    expect(Buffer.from(await store.get("c/text")).equals(text)).toBe(true);
    expect(Buffer.from(await store.get("c/noise")).equals(Buffer.from(noise))).toBe(true);
    await store.close();
    const db = new Database(path.join(dir, "small.sqlite"));
    const rows = db.prepare("SELECT key, enc, length(data) AS n FROM blobs ORDER BY key").all() as {
      key: string;
      enc: number;
      n: number;
    }[];
    expect(rows).toEqual([
      { key: "c/noise", enc: 0, n: noise.length },
      { key: "c/text", enc: 0, n: text.length },
    ]);
    // Rows an earlier version wrote: raw DEFLATE (enc 1), in several output chunks when inflated, and raw.
    const texts = [text, Buffer.from("ab".repeat(30_000)), Buffer.from("The heron waded. ".repeat(3_855))];
    for (const [i, t] of texts.entries())
      db.prepare("INSERT INTO blobs (key, data, enc) VALUES (?, ?, 1)").run(`c/deflated${i}`, deflateRawSync(t, { level: 1 }));
    db.prepare("INSERT INTO blobs (key, data) VALUES (?, ?)").run("c/old", Buffer.from("plain old bytes"));
    db.close();
    store = new FsBlobStore(dir);
    for (const [i, t] of texts.entries()) expect(Buffer.from(await store.get(`c/deflated${i}`)).equals(t), `text ${i}`).toBe(true);
    expect(Buffer.from(await store.get("c/old")).toString()).toBe("plain old bytes");
  });

  it("opens a small.sqlite from before blobs had an encoding (unversioned): migrated, its blobs kept", async () => {
    store.close();
    rmSync(path.join(dir, "small.sqlite"));
    const old = new Database(path.join(dir, "small.sqlite"));
    old.exec("CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, data BLOB NOT NULL)");
    old.prepare("INSERT INTO blobs (key, data) VALUES (?, ?)").run("c/old", Buffer.from("plain old bytes"));
    old.close();
    store = new FsBlobStore(dir);
    expect(Buffer.from(await store.get("c/old")).toString()).toBe("plain old bytes");
    await store.put("c/new", Buffer.from("new"));
    const db = new Database(path.join(dir, "small.sqlite"));
    expect(db.pragma("user_version", { simple: true })).toBe(1);
    expect(db.prepare("SELECT key, enc FROM blobs ORDER BY key").all()).toEqual([
      { key: "c/new", enc: 0 },
      { key: "c/old", enc: 0 },
    ]);
    db.close();
  });

  it("refuses keys that could leave its folder", async () => {
    for (const key of ["../x", "a/../../b", "/abs", "a//b", "a/./b", "a\\b", ""]) {
      await expect(store.put(key, new Uint8Array([1])), key).rejects.toThrow(/invalid blob key/);
    }
  });

  it("writes many small blobs concurrently in group commits", async () => {
    await Promise.all(Array.from({ length: 500 }, (_, i) => store.put(`c/p/k${i}`, Buffer.from(`blob ${i}`))));
    expect(Buffer.from(await store.get("c/p/k321")).toString()).toBe("blob 321");
    expect(await list("c")).toHaveLength(500);
  });

  it("lists a prefix holding more small blobs than one page of the listing, each key once", async () => {
    const keys = Array.from({ length: 2345 }, (_, i) => `c/p${i % 7}/k${i}`);
    await Promise.all(keys.map((k) => store.put(k, Buffer.from(k))));
    await store.put("c0/p/after", Buffer.from("not under c/"));
    expect((await list("c")).sort()).toEqual(keys.sort());
  });
});
