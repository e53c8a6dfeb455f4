import { describe, expect, it } from "vitest";
import { uuidv7 } from "./uuid.ts";

describe("uuidv7", () => {
  it("has the version 7 layout and the time in its first 48 bits", () => {
    const id = uuidv7(0x0123456789ab);
    expect(id).toMatch(/^01234567-89ab-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("sorts by time and does not repeat", () => {
    const ids = Array.from({ length: 5000 }, (_, i) => uuidv7(1_700_000_000_000 + i));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(Array.from({ length: 5000 }, () => uuidv7(1_700_000_000_000))).size).toBe(5000);
  });
});
