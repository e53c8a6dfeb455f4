import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const here = path.dirname(fileURLToPath(import.meta.url));

/** Runs an ES module in a fresh Node with V8's natives syntax, where `fast()` tells whether String.prototype is in fast mode. */
function run(body: string, env: Record<string, string> = {}): Record<string, unknown> {
  const script = `const fast = () => eval("%HasFastProperties(String.prototype)");\n${body}`;
  const out = execFileSync(process.execPath, ["--allow-natives-syntax", "--input-type=module", "-e", script], {
    cwd: here,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  return JSON.parse(out.trim().split("\n").at(-1)!) as Record<string, unknown>;
}

describe("String.prototype in V8's fast mode", () => {
  it("is made fast again after a class extends String", () => {
    const result = run(`
      class Verbatim extends String {}
      const subclassed = fast();
      const { restoreFastStringPrototype } = await import(${JSON.stringify(path.join(here, "fast-strings.ts"))});
      restoreFastStringPrototype();
      console.log(JSON.stringify({ subclassed, restored: fast(), works: new Verbatim("ab").charCodeAt(1) }));
    `);
    expect(result).toEqual({ subclassed: false, restored: true, works: 98 });
  });

  it("is fast in a process once createServices has run, whatever the libraries it loaded did", () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "docstore-fast-strings-"));
    try {
      const result = run(
        `
        const { createLogger, createServices, loadConfig } = await import(${JSON.stringify(path.join(here, "index.ts"))});
        const config = loadConfig({ DATA_DIR: process.env.TEST_DATA_DIR, LOG_LEVEL: "silent" });
        const services = createServices(config, createLogger("silent"), { role: "api" });
        const restored = fast();
        await services.close();
        console.log(JSON.stringify({ restored }));
      `,
        { TEST_DATA_DIR: dataDir },
      );
      expect(result).toEqual({ restored: true });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
