import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { qdrantSource } from "../../../test-support/qdrant-server.ts";

describe("the real Qdrant the tests and benches use", () => {
  it("reads a relative QDRANT_BIN from the working folder, since the server starts in another", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "qdrant-bin-"));
    try {
      const bin = path.join(dir, "qdrant");
      writeFileSync(bin, "");
      expect(qdrantSource({ QDRANT_BIN: path.relative(process.cwd(), bin) }, "/nowhere/qdrant")).toEqual({ bin });
      expect(qdrantSource({ QDRANT_BIN: bin }, "/nowhere/qdrant")).toEqual({ bin });
      expect(() => qdrantSource({ QDRANT_BIN: "no/such/qdrant" }, "/nowhere/qdrant")).toThrow(
        `QDRANT_BIN: no file at ${path.resolve("no/such/qdrant")}`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(qdrantSource({ QDRANT_URL: "http://127.0.0.1:6333", QDRANT_BIN: "qdrant" }, "/nowhere/qdrant")).toEqual({
      url: "http://127.0.0.1:6333",
    });
    expect(qdrantSource({}, "/nowhere/qdrant")).toBeNull();
  });
});
