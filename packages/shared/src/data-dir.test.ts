import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claimDataDir, LOCK_FILE, type DataDirClaim } from "./data-dir.ts";
import { ConfigError } from "./errors.ts";

// Each claim opens the lock file anew, so two claims in this one process conflict exactly as
// two processes' would (the kernel's lock belongs to the open file, not to the process).
describe("claimDataDir", () => {
  let root: string;
  const claims: DataDirClaim[] = [];
  const claim = (dir: string, use: "exclusive" | "shared") => {
    const c = claimDataDir(dir, use);
    claims.push(c);
    return c;
  };

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), "docstore-datadir-"));
  });
  afterEach(() => {
    for (const c of claims.splice(0)) c.release();
    rmSync(root, { recursive: true, force: true });
  });

  it("makes the folder and holds its lock file, with this process's pid", () => {
    const dir = path.join(root, "a", "b");
    const c = claim(dir, "exclusive");
    expect(c.lockFile).toBe(path.join(dir, LOCK_FILE));
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    expect(readFileSync(c.lockFile, "utf8")).toBe(`${process.pid}\n`);
  });

  it("refuses a second exclusive claim, naming DATA_DIR and the holder's pid, until the first is released", () => {
    const first = claim(root, "exclusive");
    const refuse = () => claimDataDir(root, "exclusive");
    expect(refuse).toThrow(ConfigError);
    expect(refuse).toThrow(
      `DATA_DIR=${root}: in use by another docstore process (pid ${process.pid}); one DATA_DIR serves one embedded docstore at a time`,
    );
    first.release();
    expect(() => claim(root, "exclusive")).not.toThrow();
  });

  it("lets distributed processes share a folder, and keeps an embedded one out of it (and the reverse)", () => {
    claim(root, "shared");
    claim(root, "shared");
    expect(() => claimDataDir(root, "exclusive")).toThrow(
      `DATA_DIR=${root}: in use by docstore processes of the distributed mode (QUEUE=bullmq); an embedded docstore needs its DATA_DIR to itself`,
    );
    for (const c of claims.splice(0)) c.release();
    claim(root, "exclusive");
    expect(() => claimDataDir(root, "shared")).toThrow(
      `DATA_DIR=${root}: in use by an embedded docstore process (pid ${process.pid}); the distributed mode cannot share its DATA_DIR`,
    );
  });

  it("refuses a file, or a path through one, without touching it", () => {
    const file = path.join(root, "file");
    writeFileSync(file, "keep");
    expect(() => claimDataDir(file, "exclusive")).toThrow(`DATA_DIR=${file}: is a file, not a folder`);
    expect(() => claimDataDir(path.join(file, "sub"), "shared")).toThrow(
      `DATA_DIR=${path.join(file, "sub")}: a part of its path is a file, not a folder`,
    );
    expect(readFileSync(file, "utf8")).toBe("keep");
    expect(readdirSync(root)).toEqual(["file"]);
  });
});
