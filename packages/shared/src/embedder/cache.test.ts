import { describe, expect, it } from "vitest";
import path from "node:path";
import Database from "better-sqlite3";
import { tempDirs } from "../../test-support/temp-dirs.ts";
import { MemoryEmbeddingCache, SqliteEmbeddingCache, blobToVector, textHash, vectorToBlob, type EmbeddingCache } from "./cache.ts";

const tempDir = tempDirs("embed-cache-");
const tempFile = () => path.join(tempDir(), "sub", "embeddings.sqlite");

const f32 = (xs: number[]) => Array.from(Float32Array.from(xs));

describe.each([
  ["sqlite", (): EmbeddingCache => new SqliteEmbeddingCache(tempFile())],
  ["memory", (): EmbeddingCache => new MemoryEmbeddingCache()],
])("%s embedding cache", (_name, make) => {
  it("returns what was stored, as Float32, keyed by model and hash", () => {
    const cache = make();
    const a = textHash("alpha");
    const b = textHash("beta");
    cache.setMany("m@3", [
      [a, [0.1, -0.2, 0.3]],
      [b, new Float32Array([1, 0, 0])],
    ]);
    const found = cache.getMany("m@3", [a, b, textHash("gamma"), a]);
    expect(found.size).toBe(2);
    expect(Array.from(found.get(a)!)).toEqual(f32([0.1, -0.2, 0.3]));
    expect(Array.from(found.get(b)!)).toEqual([1, 0, 0]);
    expect(cache.getMany("other@3", [a]).size).toBe(0);
    cache.setMany("m@3", [[a, [9, 9, 9]]]); // replaces
    expect(Array.from(cache.getMany("m@3", [a]).get(a)!)).toEqual([9, 9, 9]);
    cache.close?.();
  });
});

describe("SqliteEmbeddingCache", () => {
  it("persists across opens, in WAL mode, vectors as 4-byte floats", () => {
    const file = tempFile();
    const first = new SqliteEmbeddingCache(file);
    first.setMany("m", [[textHash("x"), [0.5, 0.25]]]);
    first.close();
    const again = new SqliteEmbeddingCache(file);
    expect(Array.from(again.getMany("m", [textHash("x")]).get(textHash("x"))!)).toEqual([0.5, 0.25]);
    again.close();
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    expect((raw.prepare("SELECT length(vector) AS n FROM embeddings").get() as { n: number }).n).toBe(8);
    raw.close();
  });
});

describe("vector blobs", () => {
  it("round-trip, also from an unaligned buffer", () => {
    const v = [1.5, -2.25, 3.125, 0];
    expect(Array.from(blobToVector(vectorToBlob(v)))).toEqual(v);
    const shifted = Buffer.concat([Buffer.from([7]), vectorToBlob(v)]).subarray(1);
    expect(Array.from(blobToVector(shifted))).toEqual(v);
  });

  it("hashes texts with SHA-256", () => {
    expect(textHash("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });
});
