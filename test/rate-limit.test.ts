/**
 * RATE_LIMIT_PER_MIN: each token's budget of requests per minute, answered 429 with
 * Retry-After past it; in memory in the embedded mode, in Redis across API replicas in the
 * distributed mode (and in each replica's memory while Redis is down). Probes are never limited.
 */
import { afterAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { freePort, RedisServer } from "@docstore/shared/testing";
import { removeDir, startService, type Reply, type Service } from "./harness.ts";

const FIRST = "first-limited-0123456789abcdef";
const SECOND = "second-limited-0123456789abcdef";
const TOKENS = `${FIRST}:read,${SECOND}:read`;

const list = (svc: Service, token: string) => svc.request("GET", "/get_list_of_collection", { token });

function expectLimited(res: Reply, perMinute: number) {
  expect(res.status).toBe(429);
  expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`).toBe(true);
  expect(res.body).toMatchObject({ status: 429, title: "Too Many Requests", retry_after: retryAfter });
  expect(res.body.detail).toBe(`this token is over its ${perMinute} requests per minute (RATE_LIMIT_PER_MIN); retry in ${retryAfter} s`);
}

const started: Service[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const svc of started.reverse()) await svc.stop();
  for (const dir of new Set(started.map((s) => s.dataDir))) removeDir(dir);
  for (const cleanup of cleanups) await cleanup();
});

describe("per-token rate limits", () => {
  it("answers 429 with Retry-After past a token's budget, in memory in the embedded mode; other tokens and probes go on", async () => {
    const svc = await startService({ env: { API_TOKENS: TOKENS, RATE_LIMIT_PER_MIN: "3" } });
    started.push(svc);
    for (let i = 0; i < 3; i++) expect((await list(svc, FIRST)).status).toBe(200);
    expectLimited(await list(svc, FIRST), 3);
    // Every operation draws on the same budget.
    expectLimited(await svc.request("GET", "/get_relevant_documents", { token: FIRST, query: { query: "x" } }), 3);
    expect((await list(svc, SECOND)).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      expect((await svc.request("GET", "/healthz", { token: null })).status).toBe(200);
      expect((await svc.request("GET", "/readyz", { token: null })).status).toBe(200);
      expect((await svc.request("GET", "/healthz", { token: FIRST })).status).toBe(200);
    }
    // An unknown token is refused as such, not counted against anyone.
    expect((await list(svc, "unknown-limited-0123456789abcdef")).status).toBe(401);
  });

  it("shares one budget between two API processes on one Redis (distributed mode)", async () => {
    const one = await startService({ mode: "distributed", workers: 0, env: { API_TOKENS: TOKENS, RATE_LIMIT_PER_MIN: "4" } });
    started.push(one);
    const two = await startService({ dataDir: one.dataDir, env: one.env });
    started.push(two);
    const prefix = one.env.REDIS_PREFIX!;
    cleanups.push(async () => {
      const redis = new Redis(one.env.REDIS_URL!);
      const keys = await redis.keys(`${prefix}:ratelimit:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    });
    expect(two.url).not.toBe(one.url);
    for (const svc of [one, two, one, two]) expect((await list(svc, FIRST)).status).toBe(200);
    // Each replica has served only two: alone, each would allow two more.
    expectLimited(await list(one, FIRST), 4);
    expectLimited(await list(two, FIRST), 4);
    expect((await list(two, SECOND)).status).toBe(200);
  });

  it("counts in each replica's memory while Redis is down, instead of failing requests that do not need it", async () => {
    const redis = new RedisServer(await freePort());
    await redis.start();
    cleanups.push(() => redis.stop());
    const svc = await startService({ env: { API_TOKENS: TOKENS, RATE_LIMIT_PER_MIN: "3", QUEUE: "bullmq", REDIS_URL: redis.url } });
    started.push(svc);
    await redis.stop();
    for (let i = 0; i < 3; i++) expect((await list(svc, FIRST)).status).toBe(200);
    expectLimited(await list(svc, FIRST), 3);
  });
});
