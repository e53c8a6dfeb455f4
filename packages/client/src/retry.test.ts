import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY, parseRetryAfter, retryDelay } from "./retry.ts";

describe("Retry-After", () => {
  it("reads delta-seconds and HTTP dates", () => {
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(parseRetryAfter("5", now)).toBe(5);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter("Wed, 01 Jan 2025 00:00:30 GMT", now)).toBe(30);
    expect(parseRetryAfter("Tue, 31 Dec 2024 23:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("-3", now)).toBeUndefined();
  });
});

describe("retry delay", () => {
  const policy = { ...DEFAULT_RETRY, attempts: 4, baseDelayMs: 100, maxDelayMs: 10_000 };

  it("waits exactly what Retry-After asks", () => {
    expect(retryDelay(policy, 1, 3)).toBe(3000);
    expect(retryDelay(policy, 1, 0)).toBe(0);
  });

  it("gives up when Retry-After asks for longer than the longest wait", () => {
    expect(retryDelay(policy, 1, 11)).toBeNull();
  });

  it("backs off exponentially with jitter between half and all of the step, capped", () => {
    expect(retryDelay(policy, 1, undefined, () => 0)).toBe(50);
    expect(retryDelay(policy, 1, undefined, () => 1)).toBe(100);
    expect(retryDelay(policy, 3, undefined, () => 1)).toBe(400);
    expect(retryDelay({ ...policy, attempts: 20 }, 15, undefined, () => 1)).toBe(10_000);
  });

  it("stops after the attempts", () => {
    expect(retryDelay(policy, 4, undefined)).toBeNull();
    expect(retryDelay(policy, 4, 0)).toBeNull();
    expect(retryDelay({ ...policy, attempts: 1 }, 1, 0)).toBeNull();
  });
});
