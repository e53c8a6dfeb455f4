import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { tempDirs } from "../../test-support/temp-dirs.ts";
import { SearchDemand } from "./lancedb-demand.ts";

const folder = tempDirs("docstore-demand-");

describe("SearchDemand", () => {
  it("tells a search in one instance to another on the same folder, for recentMs", async () => {
    const dir = folder();
    const searcher = new SearchDemand(dir, 2_000);
    const writer = new SearchDemand(dir, 2_000);
    expect(writer.recent()).toBe(false);
    searcher.note();
    expect(searcher.recent()).toBe(true);
    await sleep(1_100); // the writer's reading is kept for a second
    expect(writer.recent()).toBe(true);
    await sleep(2_100);
    expect(writer.recent()).toBe(false);
    expect(searcher.recent()).toBe(false);
  });

  it("tells whether searches, here or in another instance, paused for a while", async () => {
    const dir = folder();
    const searcher = new SearchDemand(dir, 60_000);
    const writer = new SearchDemand(dir, 60_000);
    expect(writer.quietFor(500)).toBe(true); // never searched
    searcher.note();
    expect(searcher.quietFor(500)).toBe(false);
    await sleep(1_100); // the writer's reading is kept for a second
    expect(writer.quietFor(2_000)).toBe(false);
    expect(writer.quietFor(500)).toBe(true);
    expect(searcher.quietFor(500)).toBe(true);
  });

  it("counts a search that runs for seconds (waiting for maintenance, say) all the while it runs", async () => {
    const dir = folder();
    const searcher = new SearchDemand(dir, 60_000);
    const writer = new SearchDemand(dir, 60_000);
    let end!: () => void;
    const search = searcher.during(() => new Promise<void>((resolve) => (end = resolve)));
    await sleep(2_300);
    expect(writer.quietFor(1_500)).toBe(false);
    end();
    await search;
    await sleep(1_600);
    expect(writer.quietFor(1_500)).toBe(true);
  });

  it("counts nothing in a folder that does not exist, and never throws there", async () => {
    const demand = new SearchDemand(path.join(folder(), "missing"), 60_000);
    demand.note();
    await sleep(50);
    const other = new SearchDemand(path.join(folder(), "missing"), 60_000);
    expect(other.recent()).toBe(false);
    expect(demand.recent()).toBe(true); // its own search counts
  });

  it("counts always with recentMs Infinity", () => {
    expect(new SearchDemand(folder(), Infinity).recent()).toBe(true);
  });
});
