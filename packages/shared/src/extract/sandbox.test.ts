import { afterEach, describe, expect, it } from "vitest";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { createExtractionSandbox, DISPATCH_MODULE, type ExtractionSandbox, type SandboxOptions } from "./sandbox.ts";
import { ExtractionError } from "../errors.ts";

const TESTING = new URL("../../test-support/extract-dispatch.ts", import.meta.url);
const bytes = (text: string) => new TextEncoder().encode(text);

const open: ExtractionSandbox[] = [];
function sandbox(options: Partial<SandboxOptions> = {}): ExtractionSandbox {
  const created = createExtractionSandbox({ timeoutMs: 5_000, maxOldGenerationSizeMb: 64, module: TESTING, ...options });
  open.push(created);
  return created;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function thread(box: ExtractionSandbox): Promise<string> {
  return (await box.extract(bytes("whoami"), "text/plain")).text.split(" ")[1]!;
}

describe("extraction sandbox", () => {
  it("extracts with the real dispatcher: RTF, e-mail and the text types", async () => {
    const box = sandbox({ module: DISPATCH_MODULE });
    const [rtf, mail, plain, csv] = await Promise.all([
      box.extract(bytes(String.raw`{\rtf1\ansi\ansicpg1252 Caf\'e9 \u8364?\par Next}`), "application/rtf"),
      box.extract(bytes("Subject: Hi\r\n\r\nBody"), "message/rfc822"),
      box.extract(bytes("  hello\r\nworld\n"), "text/plain"),
      box.extract(bytes("a,b\n1,2\n"), "text/csv"),
    ]);
    expect(rtf).toEqual({ text: "Café €\nNext", sections: [{ start: 0, end: 11 }] });
    expect(mail.text).toBe("Subject: Hi\n\nBody");
    expect(plain).toEqual({ text: "hello\nworld", sections: [{ start: 0, end: 11 }] });
    expect(csv.text).toContain("1");
  });

  it("fails a bad document with the dispatcher's ExtractionError and keeps going", async () => {
    const box = sandbox({ module: DISPATCH_MODULE });
    await expect(box.extract(bytes("{oops"), "application/json")).rejects.toThrow(ExtractionError);
    await expect(box.extract(bytes("%PDF-1.7"), "application/x-unknown")).rejects.toThrow(
      new ExtractionError("no extractor for application/x-unknown"),
    );
    await expect(box.extract(bytes("not rtf"), "application/rtf")).rejects.toThrow(new ExtractionError("not an RTF file"));
    expect((await box.extract(bytes("fine"), "text/plain")).text).toBe("fine");
  });

  it("reuses one worker across documents and passes the limits", async () => {
    const box = sandbox({ limits: { maxEntries: 7, maxUncompressedBytes: 1 } });
    expect((await box.extract(bytes("whoami"), "text/plain")).text).toMatch(/^thread \d+ max 7$/);
    expect(await thread(box)).toBe(await thread(box));
  });

  it("keeps ExtractionError an ExtractionError, and other errors as they were", async () => {
    const box = sandbox();
    const rejected = await box.extract(bytes("reject"), "text/plain").catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(ExtractionError);
    expect(rejected).toMatchObject({ name: "ExtractionError", message: "unreadable test document" });
    const bug = await box.extract(bytes("bug"), "text/plain").catch((error: unknown) => error);
    expect(bug).not.toBeInstanceOf(ExtractionError);
    expect(bug).toMatchObject({ name: "TypeError", message: "extractor bug" });
  });

  it.each(["hang", "hang-async"])("times out a document that does not finish (%s), then works on with a fresh worker", async (command) => {
    // Long enough for a fresh worker thread to start on a loaded machine.
    const box = sandbox({ timeoutMs: 2000 });
    const before = await thread(box);
    await expect(box.extract(bytes(command), "text/plain")).rejects.toThrow(new ExtractionError("extraction timed out after 2000 ms"));
    expect(await thread(box)).not.toBe(before);
  });

  it.each([
    ["crash", /^extractor crashed: boom$/],
    ["exit", /^extractor crashed: worker exited with code 3$/],
    ["oom", /^extractor crashed: .*memory limit/],
  ])("fails a document that kills its worker (%s), then works on with a fresh worker", async (command, message) => {
    const box = sandbox();
    const before = await thread(box);
    const error = await box.extract(bytes(command), "text/plain").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExtractionError);
    expect((error as Error).message).toMatch(message);
    expect(await thread(box)).not.toBe(before);
  });

  it("runs documents side by side: one that hangs fails alone while the others finish", async () => {
    const box = sandbox({ size: 3, timeoutMs: 1_500 });
    let hangSettled = false;
    const hang = box
      .extract(bytes("hang"), "text/plain")
      .catch((e: unknown) => e)
      .finally(() => (hangSettled = true));
    const crash = box.extract(bytes("crash"), "text/plain").catch((e: unknown) => e);
    const others = await Promise.all(Array.from({ length: 8 }, (_, i) => box.extract(bytes(`doc ${i}`), "text/plain")));
    expect(others.map((r) => r.text)).toEqual(Array.from({ length: 8 }, (_, i) => `text/plain: doc ${i}`));
    expect(hangSettled).toBe(false);
    expect(await crash).toEqual(new ExtractionError("extractor crashed: boom"));
    expect(await hang).toEqual(new ExtractionError("extraction timed out after 1500 ms"));
  });

  it("counts the time limit per document, not while it waits in the queue", async () => {
    // Three documents of 1 s each, one at a time: the last finishes 3 s after it was queued, past
    // the 2.5 s limit, which each document alone stays well within (a loaded machine included).
    const box = sandbox({ size: 1, timeoutMs: 2500 });
    const results = await Promise.all([1, 2, 3].map((i) => box.extract(bytes("sleep 1000"), `type/${i}`)));
    expect(results.map((r) => r.text)).toEqual(["type/1: sleep 1000", "type/2: sleep 1000", "type/3: sleep 1000"]);
  });

  it("transfers bytes that fill their buffer and copies a view into a larger one", async () => {
    const box = sandbox();
    const whole = bytes("moved");
    const big = bytes("xxcopiedxx");
    const view = big.subarray(2, 8);
    expect((await box.extract(whole, "t")).text).toBe("t: moved");
    expect(whole.byteLength).toBe(0); // detached: it moved to the worker
    expect((await box.extract(view, "t")).text).toBe("t: copied");
    expect(new TextDecoder().decode(big)).toBe("xxcopiedxx");
  });

  it("copies bytes whose buffer cannot be moved, such as zlib's output", async () => {
    const box = sandbox();
    const inflated = inflateRawSync(deflateRawSync(Buffer.from("inflated text")));
    expect((await box.extract(inflated, "t")).text).toBe("t: inflated text");
    expect(Buffer.from(inflated).toString()).toBe("inflated text");
  });

  it("fails queued and running documents on close, and refuses new ones", async () => {
    const box = sandbox({ size: 1 });
    const running = box.extract(bytes("hang"), "text/plain").catch((e: unknown) => e);
    const queued = box.extract(bytes("queued"), "text/plain").catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await box.close();
    expect(await running).toEqual(new Error("extraction sandbox is closed"));
    expect(await queued).toEqual(new Error("extraction sandbox is closed"));
    await expect(box.extract(bytes("late"), "text/plain")).rejects.toThrow("extraction sandbox is closed");
  });
});
