/**
 * The folder tree is the architecture's map, read from the sources' imports:
 * - within this package, each file belongs to a layer, and a layer imports only its own and
 *   those below it (LAYERS, lowest first); folders (and root files) form no import cycle;
 * - the domain and the ports import no library but those DOMAIN_LIBRARIES names (no driver,
 *   queue or engine client);
 * - the packages' code (src, test-support) imports other packages by name, each only those
 *   PACKAGE_DEPENDENCIES allows;
 * - test/ and bench/ import the packages by name (`@docstore/shared`, ...), never by a path
 *   into packages/;
 * - only entry points (main.ts files, scripts) and config.ts read `process.env`.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = import.meta.dirname;
const ROOT = path.resolve(SRC, "../../..");

/**
 * Lowest first. A file belongs to the layer of its longest matching entry (a folder ending in
 * `/`, or a file). The filter language's AST is a domain type; its translations for LanceDB and
 * Qdrant serve only the index adapters.
 */
const LAYERS: { name: string; members: string[] }[] = [
  { name: "domain", members: ["domain/", "errors.ts", "filter/ast.ts"] },
  { name: "ports", members: ["ports.ts"] },
  {
    name: "core",
    members: [
      "filter/",
      "search/",
      "chunk/",
      "extract/",
      "detect/",
      "batches.ts",
      "errors-wire.ts",
      "fast-strings.ts",
      "json-bytes.ts",
      "logger.ts",
    ],
  },
  { name: "config", members: ["config.ts"] },
  { name: "services", members: ["doctor/"] },
  {
    name: "adapters",
    members: [
      "blob/",
      "catalog/",
      "queue/",
      "embedder/",
      "index/",
      "sqlite/",
      "storage-errors.ts",
      "filter/lancedb.ts",
      "filter/lancedb-columns.ts",
      "filter/qdrant.ts",
      "filter/qdrant-payload.ts",
    ],
  },
  { name: "composition", members: ["compose.ts", "lifecycle.ts", "data-dir.ts", "index.ts"] },
];

/** The only libraries (and Node.js modules) the domain and ports layers may import. */
const DOMAIN_LIBRARIES = ["zod", "fastest-levenshtein", "node:crypto"];
const DOMAIN_LAYERS = LAYERS.findIndex(({ name }) => name === "ports") + 1;

/** Which workspace packages each package may import (by name). */
const PACKAGE_DEPENDENCIES: Record<string, string[]> = {
  shared: [],
  client: [],
  worker: ["shared"],
  cli: ["client"],
  api: ["shared", "worker"],
};

const isSource = (name: string) => name.endsWith(".ts") && !name.endsWith(".d.ts");
const isTest = (file: string) => file.endsWith(".test.ts");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.name === "node_modules" ? [] : e.isDirectory() ? sources(path.join(dir, e.name)) : isSource(e.name) ? [path.join(dir, e.name)] : [],
  );
}

const rel = (from: string, file: string) => path.relative(from, file).split(path.sep).join("/");

/** Every module a source names (static, type-only, re-exported and literal dynamic imports), with its line. */
function imports(text: string): { spec: string; line: number }[] {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((f) => ({ spec: f.fileName, line: text.slice(0, f.pos).split("\n").length }));
}

interface Edge {
  from: string;
  line: number;
  to: string;
  /** `to` names a library (or a Node.js module), not a file of src. */
  library?: boolean;
}

/** The imports of this package's source files (tests aside): `to` is a path relative to src, or a library's name. */
function allImports(): Edge[] {
  return sources(SRC)
    .filter((file) => !isTest(file))
    .flatMap((file) =>
      imports(readFileSync(file, "utf8")).map(({ spec, line }) => ({
        from: rel(SRC, file),
        line,
        ...(spec.startsWith(".") ? { to: rel(SRC, path.resolve(path.dirname(file), spec)) } : { to: spec, library: true }),
      })),
    );
}

/** The imports between this package's source files (tests aside), as paths relative to src. */
function importEdges(): Edge[] {
  return allImports().filter(({ to, library }) => !library && !to.startsWith(".."));
}

/** Each library the domain or ports layers import that DOMAIN_LIBRARIES does not name, as a message. */
function domainLibraryViolations(edges: readonly Edge[]): string[] {
  return edges
    .filter(({ from, to, library }) => library && layerOf(from) >= 0 && layerOf(from) < DOMAIN_LAYERS && !DOMAIN_LIBRARIES.includes(to))
    .map(({ from, line, to }) => `${from}:${line} (${LAYERS[layerOf(from)]!.name}) imports the library ${to}`);
}

/** The index in LAYERS of a file's layer, or -1 when no entry matches. */
function layerOf(file: string): number {
  let best = { layer: -1, length: 0 };
  LAYERS.forEach(({ members }, layer) => {
    for (const m of members)
      if ((m.endsWith("/") ? file.startsWith(m) : file === m) && m.length > best.length) best = { layer, length: m.length };
  });
  return best.layer;
}

/** Each import from a lower layer into a higher one, and each file in no layer, as a message. */
function layerViolations(edges: readonly Edge[], files: readonly string[]): string[] {
  const unplaced = files.filter((f) => layerOf(f) < 0).map((f) => `${f} is in no layer: add it to LAYERS`);
  const upward = edges
    .filter(({ from, to }) => layerOf(from) >= 0 && layerOf(to) > layerOf(from))
    .map(({ from, line, to }) => `${from}:${line} (${LAYERS[layerOf(from)]!.name}) imports ${to} (${LAYERS[layerOf(to)]!.name})`);
  return [...unplaced, ...upward];
}

/** Folders (with their subfolders) and root files, and the imports between them. */
function folderGraph(edges: readonly Edge[]): Map<string, Set<string>> {
  const nodeOf = (file: string) => (file.includes("/") ? `${file.split("/")[0]}/` : file);
  const graph = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    const [a, b] = [nodeOf(from), nodeOf(to)];
    if (a !== b) graph.set(a, (graph.get(a) ?? new Set()).add(b));
  }
  return graph;
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

/**
 * What is wrong with one import of a workspace package's source (`file` relative to the
 * repository): a relative path out of its package, or a package it may not use.
 */
function packageImportViolation(file: string, spec: string): string | null {
  const own = file.split("/")[1]!;
  if (spec.startsWith(".")) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    return target.startsWith(`packages/${own}/`) ? null : `imports ${spec}, a path out of packages/${own}: import the package by name`;
  }
  const used = /^@docstore\/([^/]+)/.exec(spec)?.[1];
  if (used === undefined || used === own || PACKAGE_DEPENDENCIES[own]?.includes(used)) return null;
  return `imports @docstore/${used}, which ${own} may not use`;
}

/** A path into packages/ named by an import of a file of test/ or bench/ (`file` relative to the repository). */
function pathImportViolation(file: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
  return target.startsWith("packages/") ? `imports ${spec}: import the package by name` : null;
}

/** The lines where code (not a comment or a string) reads `process.env`. */
function envReads(text: string): number[] {
  const source = ts.createSourceFile("file.ts", text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const lines: number[] = [];
  const visit = (node: ts.Node) => {
    const of =
      ts.isPropertyAccessExpression(node) && node.name.text === "env"
        ? node.expression
        : ts.isElementAccessExpression(node) && ts.isStringLiteral(node.argumentExpression) && node.argumentExpression.text === "env"
          ? node.expression
          : null;
    if (of && ts.isIdentifier(of) && of.text === "process")
      lines.push(source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return lines;
}

const mayReadEnv = (file: string) =>
  path.posix.basename(file) === "main.ts" || file === "packages/shared/src/config.ts" || /^packages\/[^/]+\/scripts\//.test(file);

describe("packages/shared/src", () => {
  it("imports only from its own layer or those below it, and places every file in a layer", () => {
    const edges = importEdges();
    expect(edges.length).toBeGreaterThan(100);
    const files = sources(SRC)
      .filter((f) => !isTest(f))
      .map((f) => rel(SRC, f));
    expect(layerViolations(edges, files)).toEqual([]);
  });

  it("keeps drivers, queues and engine clients out of the domain and the ports", () => {
    expect(domainLibraryViolations(allImports())).toEqual([]);
    expect(
      domainLibraryViolations([
        { from: "domain/jobs.ts", line: 8, to: "bullmq", library: true },
        { from: "queue/bullmq.ts", line: 1, to: "bullmq", library: true },
        { from: "ports.ts", line: 6, to: "filter/ast.ts" },
      ]),
    ).toEqual(["domain/jobs.ts:8 (domain) imports the library bullmq"]);
  });

  it("has no import cycle between its folders (and root files)", () => {
    const graph = folderGraph(importEdges());
    expect(graph.size).toBeGreaterThan(10);
    expect(cycles(graph).map((c) => c.join(" -> "))).toEqual([]);
  });

  it("finds an upward import and a file in no layer", () => {
    const edges = [
      { from: "ports.ts", line: 9, to: "queue/bullmq.ts" },
      { from: "domain/jobs.ts", line: 3, to: "filter/ast.ts" },
      { from: "index/lancedb.ts", line: 1, to: "filter/lancedb.ts" },
      { from: "filter/parse.ts", line: 2, to: "filter/lancedb.ts" },
    ];
    expect(layerViolations(edges, ["ports.ts", "stray.ts"])).toEqual([
      "stray.ts is in no layer: add it to LAYERS",
      "ports.ts:9 (ports) imports queue/bullmq.ts (adapters)",
      "filter/parse.ts:2 (core) imports filter/lancedb.ts (adapters)",
    ]);
  });

  it("finds a cycle when there is one", () => {
    expect(
      cycles(
        new Map([
          ["a/", new Set(["b/"])],
          ["b/", new Set(["a/"])],
        ]),
      ),
    ).toEqual([["a/", "b/", "a/"]]);
  });
});

describe("the workspace", () => {
  const repo = (dir: string) =>
    (existsSync(path.join(ROOT, dir)) ? sources(path.join(ROOT, dir)) : []).map((file) => ({
      file: rel(ROOT, file),
      text: readFileSync(file, "utf8"),
    }));

  it("has packages that import each other by name, in the direction PACKAGE_DEPENDENCIES gives", () => {
    const packages = readdirSync(path.join(ROOT, "packages"));
    expect(packages.toSorted()).toEqual(Object.keys(PACKAGE_DEPENDENCIES).toSorted());
    const found = packages.flatMap((p) =>
      [...repo(`packages/${p}/src`), ...repo(`packages/${p}/test-support`)].flatMap(({ file, text }) =>
        imports(text).flatMap(({ spec, line }) => {
          const wrong = packageImportViolation(file, spec);
          return wrong ? [`${file}:${line} ${wrong}`] : [];
        }),
      ),
    );
    expect(found).toEqual([]);
  });

  it("has tests and benchmarks that import the packages by name", () => {
    const found = [...repo("test"), ...repo("bench")].flatMap(({ file, text }) =>
      imports(text).flatMap(({ spec, line }) => {
        const wrong = pathImportViolation(file, spec);
        return wrong ? [`${file}:${line} ${wrong}`] : [];
      }),
    );
    expect(found).toEqual([]);
  });

  it("reads the environment only in entry points and config.ts", () => {
    const found = readdirSync(path.join(ROOT, "packages")).flatMap((p) =>
      repo(`packages/${p}/src`)
        .filter(({ file, text }) => !isTest(file) && !mayReadEnv(file) && text.includes("process"))
        .flatMap(({ file, text }) => envReads(text).map((line) => `${file}:${line} reads process.env`)),
    );
    expect(found).toEqual([]);
  });

  it("finds a path into a package, a package used against the direction, and a read of process.env", () => {
    expect(pathImportViolation("test/deploy.test.ts", "../packages/shared/src/config.ts")).toBe(
      "imports ../packages/shared/src/config.ts: import the package by name",
    );
    expect(pathImportViolation("test/deploy.test.ts", "./harness.ts")).toBeNull();
    expect(pathImportViolation("test/deploy.test.ts", "@docstore/shared/config")).toBeNull();
    expect(packageImportViolation("packages/shared/src/compose.ts", "@docstore/worker")).toBe(
      "imports @docstore/worker, which shared may not use",
    );
    expect(packageImportViolation("packages/api/src/main.ts", "@docstore/worker")).toBeNull();
    expect(packageImportViolation("packages/api/src/app.ts", "../../shared/src/config.ts")).toBe(
      "imports ../../shared/src/config.ts, a path out of packages/api: import the package by name",
    );
    expect(packageImportViolation("packages/api/src/routes/search.ts", "../citations.ts")).toBeNull();
    const text = [
      "// process.env in a comment",
      'const s = "process.env";',
      "const port = process.env.PORT;",
      'const { HOME } = process["env"];',
    ].join("\n");
    expect(envReads(text)).toEqual([3, 4]);
  });
});
