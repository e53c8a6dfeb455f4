import { describe, expect, it } from "vitest";
import { ForbiddenError } from "@docstore/shared";
import { assertInputCollections, assertMayUse, mayUse, visibleTo, type Principal } from "./access.ts";

const principal = (collections: string[] | null): Principal => ({ id: "test", scopes: new Set(["read"]), collections });

describe("collection access", () => {
  it("matches names exactly and prefixes ending in *", () => {
    const p = principal(["kb", "team-a-*"]);
    expect(mayUse(p, "kb")).toBe(true);
    expect(mayUse(p, "kb2")).toBe(false);
    expect(mayUse(p, "KB")).toBe(false);
    expect(mayUse(p, "team-a-")).toBe(true);
    expect(mayUse(p, "team-a-docs")).toBe(true);
    expect(mayUse(p, "team-b-docs")).toBe(false);
    expect(mayUse(principal(["*"]), "anything")).toBe(true);
    expect(mayUse(principal(null), "anything")).toBe(true);
    expect(mayUse(principal([]), "anything")).toBe(false);
  });

  it("refuses the first collection not granted, naming it and the grant", () => {
    const p = principal(["kb"]);
    expect(() => assertMayUse(p, ["kb", "hr", "ops"])).toThrow(
      new ForbiddenError("this token may not use the collection 'hr'; it may use: kb"),
    );
    expect(() => assertMayUse(principal([]), ["kb"])).toThrow("it may use: none");
    expect(() => assertMayUse(p, ["kb"])).not.toThrow();
  });

  it("checks both fields that name collections in an operation's input", () => {
    const p = principal(["kb"]);
    expect(() => assertInputCollections(p, { collection_name: "hr" })).toThrow(ForbiddenError);
    expect(() => assertInputCollections(p, { collection_names: ["kb", "hr"] })).toThrow(ForbiddenError);
    expect(() => assertInputCollections(p, { collection_name: "kb", collection_names: ["kb"] })).not.toThrow();
    expect(() => assertInputCollections(p, undefined)).not.toThrow();
  });

  it("narrows 'every collection' to those granted", () => {
    const all = ["kb", "hr", "team-a-1"];
    expect(visibleTo(principal(["kb", "team-a-*"]), all, (c) => c)).toEqual(["kb", "team-a-1"]);
    expect(visibleTo(principal(null), all, (c) => c)).toEqual(all);
    expect(visibleTo(principal([]), all, (c) => c)).toEqual([]);
  });
});
