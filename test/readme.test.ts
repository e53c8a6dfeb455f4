import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { CONFIG_VARIABLES } from "@docstore/shared/config";

const ROOT = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const readme = read("README.md");

describe("README", () => {
  it("gives the two commands that CI and a new user run", () => {
    expect(readme).toContain("bash scripts/run.sh start");
    expect(readme).toContain("bash scripts/run.sh test");
  });

  it("stays a first page: at most 250 lines", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(250);
  });
});

describe("docs/", () => {
  it("documents every configuration variable the service reads in configuration.md", () => {
    const page = read("docs/configuration.md");
    const missing = CONFIG_VARIABLES.filter((name) => !page.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it("links only to pages and sections that exist", () => {
    const pages = ["README.md", "bench/README.md", ...readdirSync(path.join(ROOT, "docs")).map((f) => `docs/${f}`)];
    const anchors = (file: string) =>
      new Set(
        [...read(file).matchAll(/^#+ (.+)$/gm)].map((m) =>
          m[1]!
            .toLowerCase()
            .replace(/[^\p{L}\p{N} _-]/gu, "")
            .replace(/ /g, "-"),
        ),
      );
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [file, anchor] = target!.split("#");
        const resolved = file ? path.posix.normalize(path.posix.join(path.posix.dirname(page), file)) : page;
        if (!existsSync(path.join(ROOT, resolved))) broken.push(`${page}: ${target}`);
        else if (anchor && resolved.endsWith(".md") && !anchors(resolved).has(anchor)) broken.push(`${page}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
