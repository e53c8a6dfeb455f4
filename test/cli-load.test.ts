/** `docstore load`: files, folders, globs, JSONL and CSV, failures, resuming, retries, progress. */
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, runCli, runProcess, summaryOf } from "./cli-run.ts";
import type { Seen } from "./fault-proxy.ts";
import { cli, cliAround, client, documents, documentsIn, env, loadsIn, ok, proxy, ROOT, work, writeJsonl } from "./cli-setup.ts";
import { uniqueName } from "./harness.ts";
import { FORMATS, sentence, writeMixedFiles } from "./mixed-files.ts";

cliAround();

describe("docstore load", () => {
  it("uploads files, folders and globs in parallel, with metadata for all and from each file's fields", async () => {
    const c = uniqueName("files");
    await writeMixedFiles(path.join(work, "mixed"), Object.keys(FORMATS).length, 6);
    mkdirSync(path.join(work, "globbed"));
    for (const name of ["a.txt", "b.txt", "c.md"]) writeFileSync(path.join(work, "globbed", name), `${name}: ${sentence(name.length)}`);
    writeFileSync(path.join(work, "extra.md"), "# Extra\n\nThe extra runbook.");
    // Parallel: the first upload's answer is held until a second upload arrives.
    let uploads = 0;
    proxy.rule = (s) => {
      if (s.path !== "/load_document_to_collection") return undefined;
      if (++uploads === 1) return { hold: "response" };
      proxy.release();
      return undefined;
    };
    const r = await cli([
      "load",
      "mixed",
      "globbed/*.txt",
      "extra.md",
      "-c",
      c,
      "--metadata",
      '{"type":"kb"}',
      "--metadata-from",
      "source=path,ext",
    ]);
    ok(r);
    expect(r.stdout).toMatch(/^done in [\d.]+ s: 15 indexed, 0 failed; sent 15 documents \([\d.]+ KiB\)/);
    expect(loadsIn(proxy.seen).map((s) => s.path)).toEqual(Array(15).fill("/load_document_to_collection"));
    const docs = await documents(c);
    expect(docs).toHaveLength(15);
    expect(docs.every((d) => d.status === "ready" && /^file-[0-9a-f]{32}$/.test(d.doc_id))).toBe(true);
    expect(docs.map((d) => d.name).sort()).toContain("doc-00011.odt");
    const extra = docs.find((d) => d.name === "extra.md")!;
    expect((await client.documentStatus(c, extra.doc_id)).metadata).toEqual({ type: "kb", source: "extra.md", ext: "md" });
    expect(docs.some((d) => d.name === "c.md")).toBe(false);
  });

  it("sends the lines of a JSONL file through the bulk endpoint, a batch a request", async () => {
    const c = uniqueName("jsonl");
    const lines = Array.from({ length: 1200 }, (_, i) => ({
      doc_id: `J${String(i).padStart(4, "0")}`,
      text: sentence(i),
      metadata: { priority: i % 3 },
      team: i % 2 ? "ops" : "dev",
    }));
    const file = writeJsonl("bulk.jsonl", lines);
    const r = await cli(["--json", "load", "--jsonl", file, "-c", c, "--batch-size", "500", "--metadata-from", "team"]);
    ok(r);
    const bulk = loadsIn(proxy.seen);
    expect(bulk.map((s) => [s.path, s.json.documents.length])).toEqual([
      ["/load_texts_to_collection", 500],
      ["/load_texts_to_collection", 500],
      ["/load_texts_to_collection", 200],
    ]);
    expect(summaryOf(r)).toMatchObject({
      event: "summary",
      collection: c,
      total: 1200,
      sent: 1200,
      accepted: 1200,
      indexed: 1200,
      failed: 0,
      failures: [],
    });
    // Progress comes as JSON lines on stderr, at least the last one.
    const progress = r.stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(progress.at(-1)).toMatchObject({ event: "progress", total: 1200, indexed: 1200 });
    expect((await client.documentStatus(c, "J0007")).metadata).toEqual({ priority: 1, team: "ops" });
    expect(await documents(c)).toHaveLength(1200);
  });

  it("reads CSV rows with a column mapping, texts and files alike", async () => {
    const c = uniqueName("csv");
    mkdirSync(path.join(work, "csvdir"));
    writeFileSync(path.join(work, "csvdir", "notes.md"), "# Notes\n\nReplica notes.");
    writeFileSync(
      path.join(work, "csvdir", "rows.csv"),
      'id,body,state,prio,urgent,labels,file\nA1,"first, with a comma",open,1,yes,net;db,\nA2,second text,closed,2,false,,\nA3,,open,3,,,notes.md\n',
    );
    const r = await cli([
      "load",
      "--csv",
      "csvdir/rows.csv",
      "-c",
      c,
      "--id-field",
      "id",
      "--text-field",
      "body",
      "--path-field",
      "file",
      "--metadata-from",
      "status=state,priority=prio",
      "--metadata-from",
      "flag=urgent,labels:list",
    ]);
    ok(r);
    expect(r.stdout).toMatch(/3 indexed, 0 failed/);
    expect((await client.documentStatus(c, "A1")).metadata).toEqual({ status: "open", priority: 1, flag: true, labels: ["net", "db"] });
    expect((await client.documentStatus(c, "A2")).metadata).toEqual({ status: "closed", priority: 2, flag: false });
    expect(await client.documentStatus(c, "A3")).toMatchObject({
      filename: "notes.md",
      content_type: "text/markdown",
      metadata: { status: "open", priority: 3 },
    });
    // Without a mapping, every other column is metadata as it is named.
    const c2 = uniqueName("csv");
    writeFileSync(path.join(work, "plain.csv"), "doc_id,text,status,priority\nP1,plain row,open,2\n");
    ok(await cli(["load", "--csv", "plain.csv", "-c", c2]));
    expect((await client.documentStatus(c2, "P1")).metadata).toEqual({ status: "open", priority: 2 });
  });

  it("lists each failure with its reason, exits 1, and sends the failed ones again next time", async () => {
    const c = uniqueName("fail");
    mkdirSync(path.join(work, "failing"));
    writeFileSync(path.join(work, "failing", "bad.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]));
    copyFileSync(path.join(ROOT, "test/fixtures/encrypted.pdf"), path.join(work, "failing", "encrypted.pdf"));
    const file = path.join(work, "failing", "mixed.jsonl");
    writeFileSync(
      file,
      [
        '{"text":"a good one","doc_id":"G1"}',
        '{"text":"bad metadata","doc_id":"B1","metadata":{"Bad Key":1}}',
        "not json",
        '{"path":"bad.png"}',
        '{"path":"encrypted.pdf","doc_id":"E1"}',
        '{"text":"another good one","doc_id":"G2"}',
        '{"text":"both","path":"bad.png"}',
      ].join("\n"),
    );
    const r = await cli(["--json", "load", "--jsonl", file, "-c", c]);
    expect(r.code).toBe(1);
    const summary = summaryOf(r);
    expect(summary).toMatchObject({ total: 7, accepted: 3, indexed: 2, failed: 5 });
    const by = Object.fromEntries(summary.failures.map((f: any) => [f.source, f]));
    const where = path.relative(work, file);
    expect(by[`${where}:2`]).toMatchObject({ stage: "rejected", status: 400, doc_id: "B1" });
    expect(by[`${where}:2`].reason).toMatch(/^400 Bad Request: metadata: invalid key "Bad Key"/);
    expect(by[`${where}:3`]).toMatchObject({ stage: "read", reason: expect.stringMatching(/^not JSON/) });
    expect(by[`${where}:4`]).toMatchObject({
      stage: "rejected",
      status: 415,
      reason: expect.stringMatching(/unsupported file type image\/png/),
    });
    expect(by[`${where}:5`]).toMatchObject({ stage: "indexing", doc_id: "E1", reason: "encrypted PDF" });
    expect(by[`${where}:7`]).toMatchObject({ stage: "read", reason: 'expected either "text" (a text) or "path" (a file), not both' });
    // The good texts of the refused batch went in one by one.
    expect((await documents(c)).map((d) => [d.doc_id, d.status]).sort()).toEqual([
      ["E1", "failed"],
      ["G1", "ready"],
      ["G2", "ready"],
    ]);

    proxy.seen.length = 0;
    const again = await cli(["load", "--jsonl", file, "-c", c]);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(/: 0 indexed, 5 failed, 2 already loaded; sent 3 documents/);
    expect(again.stdout).toContain("\nfailed:\n");
    expect(again.stdout).toContain(`\n  ${where}:2 (doc_id B1): 400 Bad Request: metadata: invalid key "Bad Key"`);
    expect(again.stdout).toContain(`  ${where}:5 (doc_id E1): indexing failed: encrypted PDF`);
    expect(documentsIn(proxy.seen)).toBe(3);
  });

  it("with --no-wait ends once everything is accepted", async () => {
    const c = uniqueName("nowait");
    const file = writeJsonl(
      "nowait.jsonl",
      Array.from({ length: 30 }, (_, i) => ({ text: sentence(i) })),
    );
    const r = await cli(["--json", "load", "--jsonl", file, "-c", c, "--no-wait"]);
    ok(r);
    expect(summaryOf(r)).toMatchObject({ sent: 30, accepted: 30, indexed: null, failed: 0 });
    expect(proxy.seen.filter((s) => s.path === "/get_list_of_documents_names" || s.path === "/get_document_status")).toEqual([]);
    // The same command waiting this time sends nothing, and counts nothing as indexed by this run.
    const waited = await cli(["load", "--jsonl", file, "-c", c]);
    ok(waited);
    expect(waited.stdout).toMatch(/^done in [\d.]+ s: 0 indexed, 0 failed, 30 already loaded; sent 0 documents \(0 B\)\n/);
  });

  it("sends nothing the second time, and only what changed after an edit", async () => {
    const c = uniqueName("again");
    const lines = Array.from({ length: 50 }, (_, i) => ({ text: sentence(i), metadata: { priority: i } }));
    const file = writeJsonl("again.jsonl", lines);
    ok(await cli(["load", "--jsonl", file, "-c", c]));
    const before = await documents(c);
    proxy.seen.length = 0;
    const r = await cli(["load", "--jsonl", file, "-c", c]);
    ok(r);
    expect(r.stdout).toMatch(/: 0 indexed, 0 failed, 50 already loaded; sent 0 documents/);
    expect(loadsIn(proxy.seen)).toEqual([]);

    lines[6] = { text: "an edited sixth line", metadata: { priority: 6 } };
    lines[9] = { text: sentence(9), metadata: { priority: 99 } };
    writeJsonl("again.jsonl", lines);
    proxy.seen.length = 0;
    ok(await cli(["load", "--jsonl", file, "-c", c]));
    expect(documentsIn(proxy.seen)).toBe(2);
    const after = await documents(c);
    expect(after).toHaveLength(50);
    expect(after.filter((d) => d.version === 2)).toHaveLength(2);
    expect(after.map((d) => d.doc_id).sort()).toEqual(before.map((d) => d.doc_id).sort());
  });

  it("keeps the last of a doc_id given twice, on every run", async () => {
    const c = uniqueName("dup");
    const file = writeJsonl("dup.jsonl", [
      { doc_id: "DUP", text: "the first text" },
      { doc_id: "OTHER", text: "another" },
      { doc_id: "DUP", text: "the last text" },
    ]);
    for (let run = 1; run <= 2; run++) {
      ok(await cli(["load", "--jsonl", file, "-c", c]));
      const docs = [];
      for await (const d of client.contents(c, { filter: "ORDERBYdoc_id" })) docs.push([d.doc_id, d.text]);
      expect(docs).toEqual([
        ["DUP", "the last text"],
        ["OTHER", "another"],
      ]);
    }
  });

  it("after kill -9, the same command sends only what is missing and duplicates nothing", { timeout: 120_000 }, async () => {
    const c = uniqueName("resume");
    const texts = Array.from({ length: 3000 }, (_, i) => `${sentence(i)} (line ${i})`);
    const file = writeJsonl(
      "resume.jsonl",
      texts.map((text) => ({ text })),
    );
    const args = ["load", "--jsonl", file, "-c", c, "--batch-size", "100", "--concurrency", "2"];
    // Ten batches are answered; the next two reach the service but their answers are held
    // (accepted, and the tool does not know it); then the tool is killed.
    let bulk = 0;
    proxy.rule = (s) =>
      s.path !== "/load_texts_to_collection"
        ? undefined
        : ++bulk <= 10
          ? undefined
          : bulk <= 12
            ? { hold: "response" }
            : { hold: "request" };
    const first = runCli(args, { cwd: work, env: env(), started: (p) => void proxy.held(2).then(() => p.kill("SIGKILL")) });
    expect((await first).signal).toBe("SIGKILL");
    const firstRun = loadsIn(proxy.seen).filter((s) => s.status !== undefined);
    expect(firstRun.map((s) => s.json.documents.length)).toEqual(Array(12).fill(100));

    proxy.reset();
    const r = await runCli(["--json", ...args], { cwd: work, env: env() });
    ok(r);
    const secondRun = loadsIn(proxy.seen);
    const ids = (seen: Seen[]) => seen.flatMap((s) => s.json.documents.map((d: { doc_id: string }) => d.doc_id));
    const sentBefore = new Set(ids(firstRun));
    const sentNow = ids(secondRun);
    expect(sentNow).toHaveLength(1800);
    expect(sentNow.filter((id) => sentBefore.has(id))).toEqual([]);
    const summary = summaryOf(r);
    expect(summary).toMatchObject({ sent: 1800, accepted: 1800, indexed: 1800, skipped: 1200, failed: 0 });
    expect(summary.indexed + summary.skipped).toBe(3000);
    // The two batches whose answers were lost were looked up, not sent again.
    expect(proxy.seen.filter((s) => s.path === "/get_document_status").length).toBeGreaterThanOrEqual(200);

    const docs = await documents(c);
    expect(docs).toHaveLength(3000);
    expect(docs.every((d) => d.version === 1 && d.status === "ready")).toBe(true);
    const exported = [];
    for await (const d of client.contents(c)) exported.push(d.text);
    expect(exported.sort()).toEqual([...texts].sort());
  });

  it("on Ctrl-C says it was interrupted and exits 130; the same command resumes, counting this run's documents apart", {
    timeout: 120_000,
  }, async () => {
    const c = uniqueName("sigint");
    const file = writeJsonl(
      "sigint.jsonl",
      Array.from({ length: 1000 }, (_, i) => ({ text: `${sentence(i)} (line ${i})` })),
    );
    const args = ["load", "--jsonl", file, "-c", c, "--batch-size", "100", "--concurrency", "1"];
    // Three batches are answered; the fourth reaches the service but its answer is held; then Ctrl-C.
    let bulk = 0;
    proxy.rule = (s) => (s.path !== "/load_texts_to_collection" ? undefined : ++bulk <= 3 ? undefined : { hold: "response" });
    const first = await runCli(args, { cwd: work, env: env(), started: (p) => void proxy.held(1).then(() => p.kill("SIGINT")) });
    expect(first.code, first.stderr).toBe(130);
    expect(first.stderr).toMatch(
      /\ninterrupted: sent 400 documents, 300 accepted; run the same command again to resume \(state: .+\.jsonl\)\n$/,
    );

    proxy.reset();
    const again = await runCli(["--json", ...args], { cwd: work, env: env() });
    ok(again);
    // The fourth batch was found on the service: an earlier run's, not this one's.
    expect(summaryOf(again)).toMatchObject({ total: 1000, sent: 600, accepted: 600, indexed: 600, skipped: 400, failed: 0 });
    const progress = again.stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(progress.length).toBeGreaterThan(0);
    for (const p of progress) expect(p.accepted <= p.sent && p.indexed <= p.accepted, JSON.stringify(p)).toBe(true);
    expect(await documents(c)).toHaveLength(1000);
  });

  it("retries 503 and 429 as Retry-After says, and gives up after --retries with the reason", async () => {
    const c = uniqueName("retry");
    const file = writeJsonl(
      "retry.jsonl",
      Array.from({ length: 10 }, (_, i) => ({ text: sentence(i), doc_id: `R${i}` })),
    );
    let bulk = 0;
    proxy.rule = (s) =>
      s.path !== "/load_texts_to_collection"
        ? undefined
        : ++bulk === 1
          ? { reply: 503, retryAfter: "1" }
          : bulk === 2
            ? { reply: 429, retryAfter: "0" }
            : undefined;
    const r = await cli(["load", "--jsonl", file, "-c", c]);
    ok(r);
    // Not on a terminal: plain lines, the last one when all is done.
    expect(r.stderr).toMatch(new RegExp(`^loading 10 documents into ${c} \\(state: .+\\.jsonl\\)$`, "m"));
    expect(r.stderr).toMatch(/^\d+s: sent 10\/10 \([\d.]+ K?i?B\), accepted 10, indexed 10, failed 0; [\d.]+ docs\/s, ETA 0s$/m);
    expect(r.stderr).toContain("503 on /load_texts_to_collection: trying again in 1.0 s (Retry-After)");
    expect(r.stderr).toContain("429 on /load_texts_to_collection: trying again in 0.0 s (Retry-After)");
    expect(loadsIn(proxy.seen).map((s) => s.status)).toEqual([503, 429, 202]);
    expect((await documents(c)).every((d) => d.version === 1)).toBe(true);

    const c2 = uniqueName("retry");
    proxy.seen.length = 0;
    proxy.rule = (s) => (s.path === "/load_texts_to_collection" ? { reply: 503, retryAfter: "0" } : undefined);
    const gaveUp = await cli(["--json", "--retries", "2", "load", "--jsonl", file, "-c", c2]);
    expect(gaveUp.code).toBe(1);
    expect(loadsIn(proxy.seen)).toHaveLength(3);
    const summary = summaryOf(gaveUp);
    expect(summary).toMatchObject({ accepted: 0, failed: 10, retries: 2 });
    expect(summary.failures[0]).toMatchObject({
      stage: "rejected",
      status: 503,
      reason: "503 Service Unavailable: injected by the test proxy",
    });
  });

  it("draws a progress bar on a terminal", async () => {
    const c = uniqueName("tty");
    const file = writeJsonl(
      "tty.jsonl",
      Array.from({ length: 12 }, (_, i) => ({ text: sentence(i) })),
    );
    const vars = Object.entries(env()).map(([k, v]) => `${k}=${v}`);
    // script(1) gives the command a terminal, as a person's shell would.
    const command = ["env", ...vars, process.execPath, CLI, "load", "--jsonl", file, "-c", c].join(" ");
    const r = await runProcess("script", ["-qec", command, "/dev/null"], { cwd: work });
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(
      /=+ 100% \| 12\/12 docs \| sent 12 \([\d.]+ K?i?B\) \| accepted 12 \| indexed 12 \| failed 0 \| [\d.]+ docs\/s \| ETA 0s/,
    );
    expect(r.stdout).toMatch(/done in [\d.]+ s: 12 indexed, 0 failed/);
  });
});
