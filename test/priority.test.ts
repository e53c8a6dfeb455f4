import { readFileSync, readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startService, uniqueName, type Service } from "./harness.ts";

/** The nice value of each of the process's LanceDB threads (Linux: field 19 of /proc/<pid>/task/<tid>/stat). */
function lanceNice(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      if (!/^(lance-|tokio-rt)/.test(readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8"))) return [];
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      return [Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}

const ownNice = () => Number(readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")[16]);

// The embedded worker lowers LanceDB's threads while it indexes and gives them the process's
// priority back once it is idle, so that searches then compete as equals. Raising a priority
// back needs the right to, which root has.
describe.skipIf(process.platform !== "linux" || process.getuid?.() !== 0)("LanceDB thread priority", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({});
  }, 60_000);
  afterAll(async () => {
    await svc.stop();
    removeDir(svc.dataDir);
  });

  it("is lowered while documents are indexed and restored when the worker is idle", async () => {
    const c = uniqueName();
    const base = ownNice();
    const documents = Array.from({ length: 1000 }, (_, i) => ({
      doc_id: `d${i}`,
      text: `Sandpipers and plovers, record ${i}. `.repeat(20),
    }));
    let lowered = false;
    for (let round = 0; round < 4; round++) {
      const r = await svc.request("POST", "/load_texts_to_collection", { query: { collection_name: c }, json: { documents } });
      expect(r.status).toBe(202);
      lowered ||= lanceNice(svc.proc.pid!).some((n) => n === base + 10);
    }
    for (let i = 0; i < 600 && !lowered; i++) {
      lowered = lanceNice(svc.proc.pid!).some((n) => n === base + 10);
      const list = await svc.request("GET", "/get_list_of_collection");
      if (list.body.collections.find((x: { name: string }) => x.name === c)?.pending === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(lowered).toBe(true);
    let restored = false;
    for (let i = 0; i < 200 && !restored; i++) {
      const nice = lanceNice(svc.proc.pid!);
      restored = nice.length > 0 && nice.every((n) => n === base);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(restored).toBe(true);
  }, 60_000);
});
