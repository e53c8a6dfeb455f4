import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OutsideIndex } from "./lancedb-outside.ts";

const dirs: string[] = [];
const open: OutsideIndex[] = [];
afterEach(() => {
  for (const o of open.splice(0)) o.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const folder = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "docstore-outside-"));
  dirs.push(dir);
  return dir;
};
const on = (dir: string) => {
  const o = new OutsideIndex(dir);
  open.push(o);
  return o;
};

describe("OutsideIndex", () => {
  it("lists nothing, and makes no file, until something is listed", () => {
    const o = on(folder());
    expect(o.exists()).toBe(false);
    expect(o.list()).toEqual({ docs: [], rows: 0 });
    expect(o.mark()).toBe(0);
    expect(o.exists()).toBe(false);
  });

  it("lists each document once, counting the rows of every entry", () => {
    const o = on(folder());
    o.add([
      { collection: "c", docId: "a", rows: 3 },
      { collection: "c", docId: "b", rows: 0 }, // a document without chunks: its head row
    ]);
    o.add([{ collection: "c", docId: "a", rows: 2 }]);
    expect(o.list()).toEqual({
      docs: [
        { collection: "c", docId: "a" },
        { collection: "c", docId: "b" },
      ],
      rows: 6,
    });
  });

  it("clears up to a mark: what was listed after it stays", () => {
    const o = on(folder());
    o.add([{ collection: "c", docId: "a", rows: 1 }]);
    const mark = o.mark();
    o.add([{ collection: "d", docId: "a", rows: 1 }]);
    o.clear(mark);
    expect(o.list().docs).toEqual([{ collection: "d", docId: "a" }]);
    o.clear(o.mark());
    expect(o.list()).toEqual({ docs: [], rows: 0 });
  });

  it("reads no list of more rows than asked for", () => {
    const o = on(folder());
    o.add([
      { collection: "c", docId: "a", rows: 3 },
      { collection: "c", docId: "b", rows: 2 },
    ]);
    expect(o.list(4)).toBeNull();
    expect(o.list(5)?.docs).toHaveLength(2);
    expect(o.list(4)).toBeNull(); // from the cache
  });

  it("sees what another connection on the folder listed and cleared", () => {
    const dir = folder();
    const [writer, reader] = [on(dir), on(dir)];
    writer.add([{ collection: "c", docId: "a", rows: 1 }]);
    expect(reader.list().docs).toEqual([{ collection: "c", docId: "a" }]);
    expect(reader.list().docs).toHaveLength(1); // read again from its cache
    writer.add([{ collection: "c", docId: "b", rows: 1 }]);
    expect(reader.list().docs).toHaveLength(2);
    reader.clear(reader.mark());
    expect(writer.list().docs).toEqual([]);
  });
});
