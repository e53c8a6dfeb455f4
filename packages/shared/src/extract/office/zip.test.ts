import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { makeZipBomb } from "../../../test-support/office-fixtures.ts";
import { extractDocx } from "./docx.ts";
import { DEFAULT_LIMITS } from "../types.ts";
import { ExtractionError } from "../../errors.ts";
import { readZip } from "./zip.ts";

const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);

/** Peak resident memory (maxRSS) growth while `run` runs, in MiB, and its duration in ms. */
function measure(run: () => void): { grewMiB: number; ms: number } {
  const before = process.resourceUsage().maxRSS;
  const started = performance.now();
  run();
  return { grewMiB: (process.resourceUsage().maxRSS - before) / 1024, ms: performance.now() - started };
}

function failure(run: () => unknown): ExtractionError {
  try {
    run();
  } catch (error) {
    if (error instanceof ExtractionError) return error;
    throw error;
  }
  throw new Error("expected an ExtractionError");
}

// The bombs go first: maxRSS is a high-water mark, so an earlier peak would hide their growth.
describe("ZIP bombs disguised as DOCX", () => {
  it("fails at once when the central directory declares 2 GiB", () => {
    const bomb = makeZipBomb({ kind: "deflate" });
    expect(bomb.length).toBeLessThan(4 << 20);
    let error: ExtractionError | undefined;
    const { grewMiB, ms } = measure(() => (error = failure(() => extractDocx(bomb))));
    expect(error?.message).toMatch(/^decompression bomb: /);
    expect(ms).toBeLessThan(500);
    expect(grewMiB).toBeLessThan(32);
  });

  it("stops inflating as soon as an entry passes the size it declared", () => {
    const bomb = makeZipBomb({ kind: "deflate", declaredSize: 1000 });
    let error: ExtractionError | undefined;
    const { grewMiB, ms } = measure(() => (error = failure(() => extractDocx(bomb))));
    expect(error?.message).toBe("decompression bomb: word/document.xml inflates past its declared 1000 bytes");
    expect(ms).toBeLessThan(1000);
    expect(grewMiB).toBeLessThan(32);
  });

  it("keeps memory within the limit when the declared size is just under it", () => {
    const limits = { ...DEFAULT_LIMITS, maxUncompressedBytes: 24 << 20 };
    const bomb = makeZipBomb({ kind: "deflate", declaredSize: limits.maxUncompressedBytes - 1000 });
    let error: ExtractionError | undefined;
    const { grewMiB, ms } = measure(() => (error = failure(() => extractDocx(bomb, limits))));
    expect(error?.message).toMatch(/^decompression bomb: /);
    expect(ms).toBeLessThan(2000);
    expect(grewMiB).toBeLessThan(24 + 48);
  });

  it("refuses 100,000 tiny entries", () => {
    const bomb = makeZipBomb({ kind: "entries" });
    let error: ExtractionError | undefined;
    const { ms } = measure(() => (error = failure(() => extractDocx(bomb))));
    expect(error?.message).toMatch(/^too many entries: /);
    expect(ms).toBeLessThan(500);
  });
});

describe("readZip", () => {
  const zip = zipSync({
    "a.txt": strToU8("alpha ".repeat(1000)),
    "b.txt": [strToU8("beta"), { level: 0 }],
    "c.txt": strToU8("gamma"),
  });

  it("reads only the wanted entries, stored or deflated", () => {
    const files = readZip(zip, DEFAULT_LIMITS, (name) => name !== "c.txt");
    expect([...files.keys()]).toEqual(["a.txt", "b.txt"]);
    expect(text(files.get("a.txt"))).toBe("alpha ".repeat(1000));
    expect(text(files.get("b.txt"))).toBe("beta");
  });

  it("refuses more entries than the limit, whatever the end record says", () => {
    expect(failure(() => readZip(zip, { ...DEFAULT_LIMITS, maxEntries: 2 }, () => true)).message).toMatch(/^too many entries: /);
    // The bomb's end record saturates at 65535; walking the directory finds the rest.
    const many = makeZipBomb({ kind: "entries", entries: 70_100 });
    const error = failure(() => readZip(many, { ...DEFAULT_LIMITS, maxEntries: 70_000 }, () => false));
    expect(error.message).toBe("too many entries: the ZIP file has more than 70000 (limit 70000)");
  });

  it("counts declared sizes of all entries, wanted or not, against the limit", () => {
    const limits = { ...DEFAULT_LIMITS, maxUncompressedBytes: 5000 };
    expect(failure(() => readZip(zip, limits, () => false)).message).toMatch(/^decompression bomb: /);
  });

  it("reports a truncated or corrupt file", () => {
    expect(failure(() => readZip(zip.subarray(0, zip.length - 30), DEFAULT_LIMITS, () => true)).message).toMatch(
      /^corrupt or truncated file: /,
    );
    expect(failure(() => readZip(strToU8("not a zip at all"), DEFAULT_LIMITS, () => true)).message).toMatch(/^corrupt or truncated file: /);
    const damaged = zip.slice();
    damaged.set(strToU8("XXXX"), 0); // the first local header's signature
    expect(failure(() => readZip(damaged, DEFAULT_LIMITS, (name) => name === "a.txt")).message).toMatch(/^corrupt or truncated file: /);
  });
});
