import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import { CONFIG_VARIABLES } from "@docstore/shared/config";

const readme = readFileSync(path.resolve(import.meta.dirname, "../README.md"), "utf8");

describe("README", () => {
  it("documents every configuration variable the service reads", () => {
    const table = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("## API"));
    const missing = CONFIG_VARIABLES.filter((name) => !table.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it("gives the two commands that CI and a new user run", () => {
    expect(readme).toContain("bash scripts/run.sh start");
    expect(readme).toContain("bash scripts/run.sh test");
  });
});
