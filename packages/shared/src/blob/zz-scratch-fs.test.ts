import { it, expect } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { FsBlobStore } from "./fs.ts";
it("x", async () => {
  const s = new FsBlobStore(mkdtempSync(path.join(tmpdir(), "zz-")));
  await s.put("a/b", new Uint8Array([1]));
  await s.put("a/b", new Uint8Array(70_000));
  console.log("LEN", (await s.get("a/b")).byteLength);
  s.close();
});
