import path from "node:path";
import { describe, expect, it } from "vitest";
import { qdrantSource } from "../../../test-support/qdrant-server.ts";

describe("the real Qdrant the tests and benches use", () => {
  it("reads a relative QDRANT_BIN from the working folder, since the server starts in another", () => {
    expect(qdrantSource({ QDRANT_BIN: "../q/qdrant" }, "/nowhere/qdrant")).toEqual({ bin: path.resolve("../q/qdrant") });
    expect(qdrantSource({ QDRANT_BIN: "/opt/qdrant/qdrant" }, "/nowhere/qdrant")).toEqual({ bin: "/opt/qdrant/qdrant" });
    expect(qdrantSource({ QDRANT_URL: "http://127.0.0.1:6333", QDRANT_BIN: "qdrant" }, "/nowhere/qdrant")).toEqual({
      url: "http://127.0.0.1:6333",
    });
    expect(qdrantSource({}, "/nowhere/qdrant")).toBeNull();
  });
});
