/**
 * The behaviour every BlobStore adapter must have, written once. Each adapter's test file calls
 * `describeBlobStoreContract` with a factory; tests isolate themselves by random prefixes, so a
 * factory may hand out one shared store (or bucket) to every test.
 */
import { describe, expect, it } from "vitest";
import { fixturePerTest } from "./contract-fixture.ts";
import type { BlobStore } from "../src/ports.ts";
import { NotFoundError } from "../src/errors.ts";

export interface BlobStoreFixture {
  store: BlobStore;
  cleanup(): Promise<void>;
}

/** Past 64 KiB (FsBlobStore's file threshold) and 5 MiB (S3's smallest part): the large path of any store. */
export const LARGE_BLOB_BYTES = 6 * 1024 * 1024 + 12_345;

/** Bytes that differ at every position with no short period, so a misplaced or lost chunk shows. */
export function pattern(size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

export async function listKeys(store: BlobStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.list(prefix)) keys.push(key);
  return keys.sort();
}

/** Compares as Buffers: vitest prints a useful diff, and a Buffer equals a plain Uint8Array's bytes. */
const bytes = (data: Uint8Array) => Buffer.from(data.buffer, data.byteOffset, data.byteLength);

export function describeBlobStoreContract(name: string, make: () => Promise<BlobStoreFixture>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let store: BlobStore;
    let c: string;
    fixturePerTest(make, (fx, collection) => {
      store = fx.store;
      c = collection;
    });

    it("keeps small, empty and large blobs byte for byte", async () => {
      const small = new Uint8Array([0, 1, 2, 255, 10, 13]);
      const large = pattern(LARGE_BLOB_BYTES, 7);
      await store.put(`${c}/d1/small`, small);
      await store.put(`${c}/d1/empty`, new Uint8Array(0));
      await store.put(`${c}/d2/large`, large);
      expect(bytes(await store.get(`${c}/d1/small`))).toEqual(bytes(small));
      expect((await store.get(`${c}/d1/empty`)).byteLength).toBe(0);
      const back = await store.get(`${c}/d2/large`);
      expect(back.byteLength).toBe(large.byteLength);
      expect(bytes(back).equals(bytes(large))).toBe(true);
    });

    it("answers NotFoundError for a missing key, and after a delete", async () => {
      await expect(store.get(`${c}/nothing/here`)).rejects.toBeInstanceOf(NotFoundError);
      await store.put(`${c}/d/one`, new Uint8Array([1]));
      await store.put(`${c}/d/big`, pattern(100_000));
      await store.delete(`${c}/d/one`);
      await store.delete(`${c}/d/big`);
      await expect(store.get(`${c}/d/one`)).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.get(`${c}/d/big`)).rejects.toBeInstanceOf(NotFoundError);
      await store.delete(`${c}/d/never-was`); // deleting twice (a retried job) is not an error
      expect(await listKeys(store, c)).toEqual([]);
    });

    it("lists the keys under a prefix, and only those", async () => {
      const keys = [`${c}1/a/x`, `${c}1/a/big`, `${c}1/b/y`, `${c}10/a/z`, `${c}1a/q`];
      await Promise.all(keys.map((k, i) => store.put(k, k.endsWith("big") ? pattern(100_000) : new Uint8Array([i]))));
      expect(await listKeys(store, `${c}1`)).toEqual([`${c}1/a/big`, `${c}1/a/x`, `${c}1/b/y`]);
      expect(await listKeys(store, `${c}1/`)).toEqual([`${c}1/a/big`, `${c}1/a/x`, `${c}1/b/y`]);
      expect(await listKeys(store, `${c}1/a`)).toEqual([`${c}1/a/big`, `${c}1/a/x`]);
      expect(await listKeys(store, `${c}10`)).toEqual([`${c}10/a/z`]);
      expect(await listKeys(store, `${c}2`)).toEqual([]);
    });

    it("deletes exactly a prefix's blobs: c1/ and not its sibling c10/", async () => {
      await store.put(`${c}1/x/one`, new Uint8Array([1]));
      await store.put(`${c}1/y/big`, pattern(70_000));
      await store.put(`${c}10/x/other`, new Uint8Array([2]));
      await store.put(`${c}1a/x/other`, new Uint8Array([3]));
      await store.deletePrefix(`${c}1/`);
      expect(await listKeys(store, `${c}1`)).toEqual([]);
      await expect(store.get(`${c}1/y/big`)).rejects.toBeInstanceOf(NotFoundError);
      expect(await listKeys(store, `${c}10`)).toEqual([`${c}10/x/other`]);
      expect(bytes(await store.get(`${c}1a/x/other`))).toEqual(Buffer.from([3]));
      await store.deletePrefix(`${c}1`); // an empty prefix is fine
    });

    it("deletes and lists a prefix holding more than one page (1000) of keys", async () => {
      const n = 1_010;
      for (let i = 0; i < n; i += 200) {
        await Promise.all(Array.from({ length: Math.min(200, n - i) }, (_, j) => store.put(`${c}/d${i + j}/b`, new Uint8Array([j]))));
      }
      expect(await listKeys(store, c)).toHaveLength(n);
      await store.deletePrefix(c);
      expect(await listKeys(store, c)).toEqual([]);
    });

    it("refuses keys and prefixes that could escape their place", async () => {
      for (const key of ["../x", "a/../../b", "/abs", "a//b", "a/./b", "a\\b", "", "a/b/", "a b", "a/%2e%2e/b"]) {
        await expect(store.put(key, new Uint8Array([1])), key).rejects.toThrow(/invalid blob key/);
        await expect(store.get(key), key).rejects.toThrow(/invalid blob key/);
        await expect(store.delete(key), key).rejects.toThrow(/invalid blob key/);
      }
      for (const prefix of ["..", "../x", "", "/", "a/../b"]) {
        await expect(store.deletePrefix(prefix), prefix).rejects.toThrow(/invalid blob key/);
        await expect(listKeys(store, prefix), prefix).rejects.toThrow(/invalid blob key/);
      }
    });

    it("takes many concurrent puts", async () => {
      const n = 300;
      await Promise.all(Array.from({ length: n }, (_, i) => store.put(`${c}/p/k${i}`, Buffer.from(`blob ${i}`))));
      expect(Buffer.from(await store.get(`${c}/p/k217`)).toString()).toBe("blob 217");
      expect(await listKeys(store, c)).toHaveLength(n);
    });

    it("answers ping", async () => {
      await store.ping();
    });
  });
}
