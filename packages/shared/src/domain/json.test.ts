import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { MAX_JSON_DEPTH, jsonDepth, tooDeep } from "./json.ts";

describe("jsonDepth", () => {
  it("counts nesting, not brackets inside strings", () => {
    expect(jsonDepth("1")).toBe(0);
    expect(jsonDepth('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(jsonDepth('{"a":"[[[[{{{{"}')).toBe(1);
    expect(jsonDepth('["\\"[[[", "\\\\", [[]]]')).toBe(3);
  });

  it("agrees with a character-by-character reading on any text of brackets, quotes and backslashes", () => {
    const reference = (text: string) => {
      let depth = 0;
      let deepest = 0;
      let inString = false;
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (inString) {
          if (c === "\\") i++;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === "[" || c === "{") deepest = Math.max(deepest, ++depth);
        else if (c === "]" || c === "}") depth--;
      }
      return deepest;
    };
    const text = fc.array(fc.constantFrom("[", "]", "{", "}", '"', "\\", "a", " "), { maxLength: 120 }).map((c) => c.join(""));
    fc.assert(
      fc.property(text, (t) => {
        expect(jsonDepth(t, 1000)).toBe(reference(t));
      }),
      { numRuns: 3000 },
    );
  });

  it("stops counting past the limit, so a huge nesting costs no more than the limit", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    expect(jsonDepth(deep)).toBe(MAX_JSON_DEPTH + 1);
    expect(tooDeep(deep)).toMatch(/nested more than 64 levels deep/);
    expect(tooDeep("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH))).toBeNull();
    expect(tooDeep("[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1))).not.toBeNull();
  });
});
