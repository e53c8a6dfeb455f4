/**
 * The folder tree is the architecture's map: folders depend on each other in one direction
 * only. Each folder of src (with its subfolders) and each file at the root is a node; an
 * import from one node into another is an edge; no cycle is allowed.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const SRC = import.meta.dirname;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [path.join(dir, e.name)] : [],
  );
}

const nodeOf = (file: string) => {
  const rel = path.relative(SRC, file).split(path.sep);
  return rel.length === 1 ? rel[0]! : `${rel[0]}/`;
};

function importGraph(): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const file of sources(SRC)) {
    for (const [, spec] of readFileSync(file, "utf8").matchAll(/from "(\.[^"]+)"/g)) {
      const target = path.resolve(path.dirname(file), spec!);
      if (!target.startsWith(SRC)) continue;
      const [a, b] = [nodeOf(file), nodeOf(target)];
      if (a !== b) edges.set(a, (edges.get(a) ?? new Set()).add(b));
    }
  }
  return edges;
}

/** Every cycle's nodes, found by a depth-first search (each reported once, from its first node). */
function cycles(edges: Map<string, Set<string>>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (n: string) => {
    state.set(n, "open");
    stack.push(n);
    for (const m of edges.get(n) ?? []) {
      if (state.get(m) === "open") found.push([...stack.slice(stack.indexOf(m)), m]);
      else if (!state.has(m)) visit(m);
    }
    stack.pop();
    state.set(n, "done");
  };
  for (const n of edges.keys()) if (!state.has(n)) visit(n);
  return found;
}

describe("packages/shared/src", () => {
  it("has no import cycle between its folders (and root files)", () => {
    const edges = importGraph();
    expect(edges.size).toBeGreaterThan(10);
    expect(cycles(edges).map((c) => c.join(" -> "))).toEqual([]);
  });

  it("finds a cycle when there is one", () => {
    expect(cycles(new Map([["a/", new Set(["b/"])], ["b/", new Set(["a/"])]]))).toEqual([["a/", "b/", "a/"]]);
  });
});
