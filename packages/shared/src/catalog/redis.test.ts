import { afterAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { RedisCatalog } from "./redis.ts";
import { RedisServer, freePort, testRedisPrefix } from "../../test-support/redis-server.ts";
import { describeCatalogContract, newDocument } from "../../test-support/catalog-contract.ts";
import { UnavailableError } from "../errors.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const admin = new Redis(REDIS_URL, { lazyConnect: true });
afterAll(() => admin.quit());

async function keysOf(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await admin.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== "0");
  return keys.sort();
}

async function fixture(options: { purgeChunk?: number } = {}) {
  const prefix = testRedisPrefix();
  const catalog = new RedisCatalog({ redisUrl: REDIS_URL, prefix, ...options });
  return {
    prefix,
    catalog,
    async cleanup() {
      await catalog.close();
      const keys = await keysOf(prefix);
      if (keys.length > 0) await admin.unlink(...keys);
    },
  };
}

describeCatalogContract("RedisCatalog", () => fixture());

/** Waits until the catalog answers a ping; fails ("the catalog did not <what>") after `ms`. */
async function pingsWithin(catalog: RedisCatalog, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (
    !(await catalog.ping().then(
      () => true,
      () => false,
    ))
  ) {
    if (Date.now() > deadline) throw new Error(`the catalog did not ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("RedisCatalog", () => {
  it("keeps its keys under the prefix, and a dropped collection's in chunks until none is left", async () => {
    const fx = await fixture({ purgeChunk: 7 });
    try {
      const { catalog, prefix } = fx;
      for (let i = 0; i < 30; i++) await catalog.accept(newDocument("big", `d:${i}`));
      await catalog.accept(newDocument("keep", "d:1"));
      expect((await keysOf(prefix)).filter((k) => k.includes(":big"))).toHaveLength(33); // coll, docs, fields, 30 docs
      expect(await catalog.deleteCollection("big")).toBe(30);
      expect(await keysOf(prefix)).toEqual(
        [
          `${prefix}:catalog:collections`,
          `${prefix}:catalog:gen`,
          `${prefix}:catalog:coll:keep`,
          `${prefix}:catalog:pending`,
          `${prefix}:catalog:docs:keep:2`,
          `${prefix}:catalog:doc:keep:2:d:1`,
          `${prefix}:catalog:fields:keep:2`,
        ].sort(),
      );
    } finally {
      await fx.cleanup();
    }
  });

  it("finishes removing a dropped collection that an earlier call left behind", async () => {
    const fx = await fixture();
    try {
      const { catalog, prefix } = fx;
      for (let i = 0; i < 5; i++) await catalog.accept(newDocument("a", `d${i}`));
      // As if the process died right after unlisting the collection.
      await admin.eval(
        `redis.call('SADD', KEYS[1], 'a:1'); redis.call('DEL', KEYS[2]); redis.call('ZREM', KEYS[3], 'a')`,
        3,
        `${prefix}:catalog:trash`,
        `${prefix}:catalog:coll:a`,
        `${prefix}:catalog:collections`,
      );
      expect(await catalog.collectionExists("a")).toBe(false);
      expect(await catalog.deleteCollection("other")).toBe(0);
      expect(await keysOf(prefix)).toEqual([`${prefix}:catalog:gen`]);
    } finally {
      await fx.cleanup();
    }
  });

  it("fails fast with UnavailableError while Redis is down, and works again once it is back", async () => {
    const server = new RedisServer(await freePort());
    await server.start();
    const catalog = new RedisCatalog({ redisUrl: server.url, prefix: "outage" });
    try {
      expect((await catalog.accept(newDocument("c", "before"))).record.version).toBe(1);
      await server.stop();

      const calls: [string, () => Promise<unknown>][] = [
        ["accept", () => catalog.accept(newDocument("c", "during"))],
        ["get", () => catalog.get("c", "before")],
        ["markReady", () => catalog.markReady("c", "before", 1, 1)],
        ["listCollections", () => catalog.listCollections()],
        ["listDocuments", () => catalog.listDocuments("c", 10, null)],
        ["deleteCollection", () => catalog.deleteCollection("c")],
        ["ping", () => catalog.ping()],
      ];
      for (const [name, call] of calls) {
        const started = performance.now();
        const err = await call().then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, name).toBeInstanceOf(UnavailableError);
        expect((err as UnavailableError).kind).toBe("unavailable");
        expect((err as Error).message).toMatch(/^catalog unavailable: /);
        expect(performance.now() - started, name).toBeLessThan(1000);
      }

      await server.start();
      await pingsWithin(catalog, 15_000, "reconnect");
      // A Redis without persistence comes back empty; the scripts are loaded again by themselves.
      const again = await catalog.accept(newDocument("c", "after"));
      expect(again.record.version).toBe(1);
      expect(await catalog.get("c", "after")).toEqual(again.record);
    } finally {
      await catalog.close();
      await server.stop();
    }
  });

  it("starts while Redis is down, and connects once it is up", async () => {
    const server = new RedisServer(await freePort());
    const catalog = new RedisCatalog({ redisUrl: server.url, prefix: "late" });
    try {
      const started = performance.now();
      await expect(catalog.collectionExists("c")).rejects.toBeInstanceOf(UnavailableError);
      expect(performance.now() - started).toBeLessThan(2500);
      await server.start();
      await pingsWithin(catalog, 15_000, "connect");
      expect((await catalog.accept(newDocument("c", "d"))).previous).toBeNull();
      expect(await catalog.collectionExists("c")).toBe(true);
    } finally {
      await catalog.close();
      await server.stop();
    }
  });
});
