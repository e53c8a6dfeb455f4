/** The CLI's commands other than load, its flags and usage errors, and the ways to run it. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CLI, runCli, runProcess } from "./cli-run.ts";
import { cli, cliAround, client, documents, env, ok, ROOT, svc, work, writeJsonl } from "./cli-setup.ts";
import { uniqueName } from "./harness.ts";

/** A Node.js older than 24 on the PATH (a machine's own, say), to run the tool with. */
const OLD_NODE = (process.env.PATH ?? "")
  .split(path.delimiter)
  .map((dir) => path.join(dir, "node"))
  .find(
    (bin) =>
      existsSync(bin) && Number(spawnSync(bin, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" }).stdout.trim()) < 24,
  );

cliAround();

describe("the other commands", () => {
  // A dozen CLI runs in a row; the load tests run beside this file, so it gets more than the default 30 s.
  it("search, ls, status, rm, rm-collection and export", { timeout: 90_000 }, async () => {
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
    writeFileSync(path.join(work, "extra.md"), "# Extra\n\nThe extra runbook.");
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
