/**
 * LanceSearchIndex instances on temporary folders for the index's own tests: each one made is
 * closed, and its folder removed, after each test. Plus the small documents those tests write.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import { parseFilter } from "../src/filter/parse.ts";
import type { IndexedDocument } from "../src/ports.ts";
import { LanceSearchIndex, type LanceIndexOptions } from "../src/index/lancedb.ts";

/** Registers the cleanup (afterEach) in the calling test file. */
export function lanceIndexes() {
  const dirs: string[] = [];
  const open: LanceSearchIndex[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((i) => i.close()));
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    tempDir(): string {
      const dir = mkdtempSync(path.join(tmpdir(), "docstore-lance-"));
      dirs.push(dir);
      return dir;
    },
    /** Dimensions 3 and no maintenance timer unless `options` say otherwise. */
    make(options: Partial<LanceIndexOptions> & { dir: string }): LanceSearchIndex {
      const index = new LanceSearchIndex({ dimensions: 3, maintainEveryMs: 0, ...options });
      open.push(index);
      return index;
    },
  };
}

export const all = parseFilter("");
export const doc = (docId: string, text: string, version = 1, collection = "c"): IndexedDocument => ({
  collection,
  docId,
  version,
  metadata: { status: "open" },
  text,
});
/** The document as one chunk. */
export const whole = (d: IndexedDocument) => ({ doc: d, chunks: [{ index: 0, text: d.text, start: 0, end: d.text.length }] });
