import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, jsonDepth, tooDeep } from "./json.ts";

describe("jsonDepth", () => {
  it("counts nesting, not brackets inside strings", () => {
    expect(jsonDepth("1")).toBe(0);
    expect(jsonDepth('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(jsonDepth('{"a":"[[[[{{{{"}')).toBe(1);
    expect(jsonDepth('["\\"[[[", "\\\\", [[]]]')).toBe(3);
  });

  it("stops counting past the limit, so a huge nesting costs no more than the limit", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    expect(jsonDepth(deep)).toBe(MAX_JSON_DEPTH + 1);
    expect(tooDeep(deep)).toMatch(/nested more than 64 levels deep/);
    expect(tooDeep("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH))).toBeNull();
    expect(tooDeep("[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1))).not.toBeNull();
  });
});
