import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DocstoreClient } from "@docstore/client";
import { CLI, runCli, runProcess, summaryOf, type CliResult } from "./cli-run.ts";
import { startFaultProxy, type FaultProxy, type Seen } from "./fault-proxy.ts";
import { removeDir, startService, uniqueName, type Service } from "./harness.ts";
import { FORMATS, sentence, writeMixedFiles } from "./mixed-files.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
/** A Node.js older than 24 on the PATH (a machine's own, say), to run the tool with. */
const OLD_NODE = (process.env.PATH ?? "")
  .split(path.delimiter)
  .map((dir) => path.join(dir, "node"))
  .find(
    (bin) =>
      existsSync(bin) && Number(spawnSync(bin, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" }).stdout.trim()) < 24,
  );
let svc: Service;
let proxy: FaultProxy;
let client: DocstoreClient;
let work: string;

const env = (extra: Record<string, string> = {}) => ({
  DOCSTORE_URL: proxy.url,
  DOCSTORE_TOKEN: svc.token,
  XDG_STATE_HOME: path.join(work, "state"),
  ...extra,
});
const cli = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) =>
  runCli(args, { cwd: work, env: env(opts.env), input: opts.input });
const loadsIn = (seen: Seen[]) => seen.filter((s) => s.method === "POST" && s.path.startsWith("/load_"));
/** Documents the requests carried: a bulk request's list, one for any other load. */
const documentsIn = (seen: Seen[]) =>
  loadsIn(seen).reduce((n, s) => n + (s.path === "/load_texts_to_collection" ? s.json.documents.length : 1), 0);
const ok = (r: CliResult) => expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);

async function documents(collection: string) {
  const all = [];
  for await (const d of client.documents(collection)) all.push(d);
  return all;
}

function writeJsonl(name: string, lines: unknown[]): string {
  const file = path.join(work, name);
  writeFileSync(file, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n");
  return file;
}

beforeAll(async () => {
  svc = await startService();
  proxy = await startFaultProxy(svc.url);
  client = new DocstoreClient({ url: svc.url, token: svc.token });
  work = mkdtempSync(path.join(tmpdir(), "docstore-cli-"));
}, 60_000);

afterAll(async () => {
  await proxy.close();
  expect(await svc.stop()).toBe(0);
  removeDir(svc.dataDir);
  removeDir(work);
});

beforeEach(() => proxy.reset());

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

describe("the other commands", () => {
  it("search, ls, status, rm, rm-collection and export", async () => {
    const c = uniqueName("cmds");
    const c2 = uniqueName("cmds");
    const file = writeJsonl("cmds.jsonl", [
      { doc_id: "D1", text: "Replica lag grows during the nightly backup.", metadata: { status: "open", priority: 1 } },
      { doc_id: "D2", text: "The printer on floor two jams.", metadata: { status: "closed", priority: 3 } },
      { doc_id: "D3", text: "Database outage in the billing cluster.", metadata: { status: "open", priority: 1 } },
    ]);
    ok(await cli(["load", "--jsonl", file, "-c", c]));

    const found = await cli(["search", "replica", "lag", "-c", c, "-k", "2"]);
    ok(found);
    expect(found.stdout).toMatch(
      new RegExp(
        `^1\\. [\\d.]+  ${c}/D1 #0\\n   Replica lag grows during the nightly backup\\.\\n   \\{"status":"open","priority":1\\}\\n`,
      ),
    );
    const json = JSON.parse((await cli(["--json", "search", "outage", "--filter", "status=open"])).stdout);
    expect(json.results.map((h: { doc_id: string }) => h.doc_id)).toEqual(["D3"]);

    const collections = await cli(["ls"]);
    ok(collections);
    expect(collections.stdout).toMatch(/^COLLECTION +DOCUMENTS +READY +PENDING +FAILED\n/);
    expect(collections.stdout).toMatch(new RegExp(`\\n${c} +3 +3 +0 +0\\n`));
    const docs = await cli(["ls", c]);
    expect(
      docs.stdout
        .split("\n")
        .slice(0, 4)
        .map((l) => l.split(/ +/).slice(0, 3).join(" ")),
    ).toEqual(["DOC_ID STATUS VER", "D1 ready 1", "D2 ready 1", "D3 ready 1"]);
    expect(
      (await cli(["--json", "ls", c, "--status", "ready"])).stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).doc_id),
    ).toEqual(["D1", "D2", "D3"]);
    expect((await cli(["--json", "ls", c, "--status", "failed"])).stdout).toBe("");
    const byFilter = await cli(["ls", c, "--filter", "priority=1"]);
    expect(
      byFilter.stdout
        .trim()
        .split("\n")
        .slice(1)
        .map((l) => l.split(/ +/)[0]),
    ).toEqual(["D1", "D3"]);
    expect(byFilter.stdout).toMatch(/^DOC_ID +STATUS +VER +SIZE +UPDATED +NAME +ERROR\nD1 +ready +1 +44 B +\d{4}-\d\d-\d\d \d\d:\d\d/);

    const status = await cli(["status", "D2", "-c", c]);
    ok(status);
    expect(status.stdout).toMatch(/^doc_id +D2\n/);
    expect(status.stdout).toMatch(/\nmetadata +\{"status":"closed","priority":3\}\n/);
    const missing = await cli(["status", "nope", "-c", c]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`error: 404 Not Found: unknown document nope in collection ${c}\n`);

    // export gives what load --jsonl reads back.
    const exported = await cli(["export", "-c", c]);
    ok(exported);
    const lines = exported.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { doc_id: "D1", text: "Replica lag grows during the nightly backup.", metadata: { status: "open", priority: 1 } },
      { doc_id: "D2", text: "The printer on floor two jams.", metadata: { status: "closed", priority: 3 } },
      { doc_id: "D3", text: "Database outage in the billing cluster.", metadata: { status: "open", priority: 1 } },
    ]);
    ok(await cli(["export", "-c", c, "--filter", "priority=1", "-o", "open.jsonl"]));
    ok(await cli(["load", "--jsonl", "open.jsonl", "-c", c2]));
    expect((await cli(["export", "-c", c2])).stdout).toBe(
      exported.stdout
        .split("\n")
        .filter((l) => l.includes('"priority":1'))
        .join("\n") + "\n",
    );

    expect((await cli(["rm", "D2", "-c", c])).stdout).toBe(`deleted ${c}/D2\n`);
    const rmMissing = await cli(["rm", "D2", "D3", "-c", c]);
    expect(rmMissing.code).toBe(1);
    expect(rmMissing.stderr).toBe(`not deleted: unknown document D2 in collection ${c}\n`);
    expect((await documents(c)).map((d) => d.doc_id)).toEqual(["D1"]);

    const no = await cli(["rm-collection", c2], { input: "n\n" });
    expect(no.code).toBe(1);
    expect(no.stderr).toContain(`delete collection ${c2} and its 2 documents? [y/N] `);
    expect((await cli(["rm-collection", c2])).code).toBe(1);
    expect((await client.listCollections()).some((x) => x.name === c2)).toBe(true);
    const yes = await cli(["rm-collection", c2], { input: "y\n" });
    ok(yes);
    expect(yes.stdout).toBe(`deleted collection ${c2} (2 documents)\n`);
    ok(await cli(["rm-collection", c, "--yes"]));
    expect((await client.listCollections()).some((x) => x.name === c || x.name === c2)).toBe(false);
  });

  it("finds a document by the file it was loaded from, and lists documents within 100 columns", async () => {
    const c = uniqueName("byfile");
    const long = "a-runbook-with-a-rather-long-file-name-that-cannot-fit-in-the-column-left-for-names.md";
    mkdirSync(path.join(work, "byfile"));
    writeFileSync(path.join(work, "byfile", "runbook.md"), "# Runbook\n\nRestart the replica.");
    writeFileSync(path.join(work, "byfile", long), "# Long\n\nA long name.");
    ok(await cli(["load", "byfile", "-c", c]));

    const byPath = await cli(["status", "byfile/runbook.md", "-c", c]);
    ok(byPath);
    const id = /^doc_id +(file-[0-9a-f]{32})\n/.exec(byPath.stdout)?.[1];
    expect(id, byPath.stdout).toBeDefined();
    expect(byPath.stdout).toMatch(/\nname +runbook\.md\n/);
    // From a folder where no such file is: by the file name the catalog keeps.
    const byName = await runCli(["status", "runbook.md", "-c", c], { cwd: ROOT, env: env() });
    ok(byName);
    expect(byName.stdout.split("\n")[0]).toBe(`doc_id     ${id}`);

    const listed = await cli(["ls", c]);
    ok(listed);
    const lines = listed.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(100);
    expect(listed.stdout).toMatch(/ {2}a-runbook-with-\S*…\n/);

    expect((await cli(["rm", "runbook.md", "-c", c], { env: {} })).stdout).toBe(`deleted ${c}/${id} (runbook.md)\n`);
    expect((await documents(c)).map((d) => d.name)).toEqual([long]);
  });

  it("takes the service and token from flags over the environment; a wrong command line exits 2", async () => {
    const wrong = { DOCSTORE_TOKEN: "wrong-token-0123456789" };
    const refused = await cli(["ls"], { env: wrong });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: 401 Unauthorized: /);
    ok(await cli(["--token", svc.token, "ls"], { env: wrong }));
    // No token at all: what to set, and where a local service keeps the one it generated.
    const none = await cli(["ls"], { env: { DOCSTORE_TOKEN: "" } });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error: 401 Unauthorized: .*; no token given: set DOCSTORE_TOKEN or pass --token\. /);
    expect(none.stderr).toContain("keeps it in DATA_DIR/api-token");
    const noneLoad = await cli(["load", "extra.md", "-c", uniqueName("refused")], { env: { DOCSTORE_TOKEN: "" } });
    expect(noneLoad.code).toBe(1);
    expect(noneLoad.stdout).toMatch(/\nno token given: set DOCSTORE_TOKEN or pass --token\. .*DATA_DIR\/api-token/);
    // A refused token stops a load at once, with its summary.
    const load = await cli(["load", "extra.md", "-c", uniqueName("refused")], { env: wrong });
    expect(load.code).toBe(1);
    expect(load.stdout).toMatch(/^stopped in [\d.]+ s: 0 indexed, 0 failed; sent 1 documents/);
    expect(load.stdout).toMatch(/\nerror: 401 Unauthorized: .*; run the same command again to send what is missing\n/);
    ok(await cli(["ls", "--url", svc.url], { env: { DOCSTORE_URL: "http://127.0.0.1:9" } }));

    const usage = async (args: string[], message: string) => {
      const r = await cli(args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(message);
    };
    await usage(["load", "-c", "x"], "load: give paths (files, folders, globs), or --jsonl FILE, or --csv FILE");
    await usage(["load", "nowhere", "-c", "x"], "nowhere: no such file or folder");
    await usage(["load", "no/*.pdf", "-c", "x"], "no/*.pdf: no file matches");
    await usage(["load", "extra.md", "-c", "x", "--metadata", "[1]"], "--metadata: expected a JSON object");
    await usage(["load", "extra.md", "-c", "x", "--metadata-from", "a=b:date"], '--metadata-from: a=b:date: unknown type "date"');
    await usage(["load", "extra.md"], "required option '-c, --collection <name>' not specified");
    await usage(["frobnicate"], "unknown command 'frobnicate'");
  });

  it("runs from any folder as bash scripts/run.sh docstore, with paths relative to that folder", async () => {
    const c = uniqueName("runsh");
    mkdirSync(path.join(work, "here"), { recursive: true });
    writeFileSync(path.join(work, "here", "run-from-here.md"), "# Run from here\n\nA note loaded through scripts/run.sh.");
    const r = await runProcess("bash", [path.join(ROOT, "scripts/run.sh"), "docstore", "load", "./here/run-from-here.md", "-c", c], {
      cwd: work,
      env: { ...(process.env as Record<string, string>), ...env(), NODE_DISABLE_COMPILE_CACHE: "1" },
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect((await documents(c)).map((d) => d.name)).toEqual(["run-from-here.md"]);
  });

  it.skipIf(!OLD_NODE)(
    `under an older Node.js (${OLD_NODE ?? "none found on PATH"}) says Node.js 24 is needed and how to run it`,
    async () => {
      const r = await runProcess(OLD_NODE!, [CLI, "ls"], { cwd: work, env: env() });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^error: docstore needs Node\.js 24 or later; this is Node\.js \d+\./);
      expect(r.stderr).toContain(`bash ${path.join(ROOT, "scripts/run.sh")} docstore …`);
    },
  );

  it("runs from a checkout as pnpm docstore, with paths relative to where it was typed", async () => {
    // (pnpm would keep Node's compile cache in the run's temporary folder, which must end empty.)
    const c = uniqueName("pnpm");
    writeFileSync(path.join(work, "typed-here.md"), "# Typed here\n\nA note loaded through pnpm.");
    const r = await runProcess("pnpm", ["-s", "-C", ROOT, "docstore", "load", "typed-here.md", "-c", c], {
      cwd: work,
      env: { ...(process.env as Record<string, string>), ...env(), NODE_DISABLE_COMPILE_CACHE: "1" },
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect((await documents(c)).map((d) => d.name)).toEqual(["typed-here.md"]);
    expect(readFileSync(path.join(work, "typed-here.md"), "utf8")).toContain("Typed here");
  });
});
