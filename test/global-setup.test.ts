import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { testRedisPrefix } from "@docstore/shared/testing";
import setup from "./global-setup.ts";

const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { lazyConnect: true });
afterAll(() => redis.quit());

// setup() sets TMPDIR and DOCSTORE_TEST_RUN for a run of its own; this file's run keeps its own.
const saved = { TMPDIR: process.env.TMPDIR, DOCSTORE_TEST_RUN: process.env.DOCSTORE_TEST_RUN };
afterEach(() => Object.assign(process.env, saved));

describe("the run's leftover check", () => {
  it("fails naming what a test left (folders, files, Redis keys), and removes it all the same", async () => {
    const teardown = setup();
    const dir = process.env.TMPDIR!;
    mkdirSync(path.join(dir, "docstore-test-abc"));
    writeFileSync(path.join(dir, "stray.txt"), "x");
    mkdirSync(path.join(dir, ".tmpAb12Cd")); // LanceDB's empty folder: not counted
    const key = `${testRedisPrefix()}:ingest:wait`;
    await redis.set(key, "1");
    await expect(teardown()).rejects.toThrow(
      /^the tests left behind 2 temporary folders or files \(docstore-test-abc, stray\.txt\) and 1 Redis keys under test-[0-9a-f]{8}-\*; each test must remove what it makes$/,
    );
    expect(existsSync(dir)).toBe(false);
    expect(await redis.exists(key)).toBe(0);
  });

  it("passes a run that left nothing, whatever other runs have on the same Redis", async () => {
    const other = `test-otherrun-${Date.now()}:x`;
    await redis.set(other, "1");
    try {
      const teardown = setup();
      mkdirSync(path.join(process.env.TMPDIR!, ".tmpZz99Yy"));
      await expect(teardown()).resolves.toBeUndefined();
      expect(await redis.exists(other)).toBe(1);
    } finally {
      await redis.del(other);
    }
  });
});
