import { describe, expect, it } from "vitest";
import { uuidv7 } from "./uuid.ts";

describe("uuidv7", () => {
  it("makes valid version-7 UUIDs that carry the time they were made", () => {
    for (let i = 0; i < 1000; i++) {
      const before = Date.now();
      const id = uuidv7();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
      // The counter's wrap may move an id a millisecond ahead; never behind.
      expect(ms).toBeGreaterThanOrEqual(before);
      expect(ms).toBeLessThanOrEqual(Date.now() + 1);
    }
  });

  it("sorts in the order made, many to a millisecond, and never repeats", () => {
    const ids = Array.from({ length: 200_000 }, () => uuidv7());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
