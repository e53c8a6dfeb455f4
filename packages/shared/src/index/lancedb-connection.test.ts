import { describe, expect, it } from "vitest";
import { all, doc, lanceIndexes, whole } from "../../test-support/lance-fixture.ts";

const { tempDir, make } = lanceIndexes();

describe("LanceSearchIndex connection", () => {
  it("moves to a new connection after enough versions, closing the old one only when what uses it ends", async () => {
    const dir = tempDir();
    const writer = make({ dir, renewAfterVersions: 5, renewCheckMs: 20 });
    const reader = make({ dir, renewAfterVersions: 5, renewCheckMs: 20 });
    await writer.indexDocuments(Array.from({ length: 30 }, (_, i) => whole(doc(`d${i}`, `gannet ${i}`))));
    // A listing held open across the renewals: its connection stays open until it is read to the end.
    const scan = reader.scanDocuments({ collections: ["c"], filter: all, batch: 10 });
    const first = await scan.next();
    for (let i = 30; i < 60; i++) {
      await writer.indexDocuments([whole(doc(`d${i}`, `gannet ${i}`))]);
      expect((await reader.search({ query: "gannet", collections: ["c"], filter: all, k: 100 })).length).toBe(i + 1);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(writer.connections).toBeGreaterThan(1);
    expect(reader.connections).toBeGreaterThan(1);
    let listed = first.done ? 0 : first.value.length;
    for (let page = await scan.next(); !page.done; page = await scan.next()) listed += page.value.length;
    expect(listed).toBeGreaterThanOrEqual(30);
    expect((await writer.findDocuments({ collections: ["c"], filter: all, limit: 100, offset: 0 })).length).toBe(60);
  });
});
