import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectionError, DocstoreClient, OPERATIONS, ProblemError, type RetryInfo } from "@docstore/client";
import { generateTypes, normalize } from "@docstore/client/scripts/openapi-types";
import { runProcess } from "./cli-run.ts";
import { startFaultProxy, type FaultProxy } from "./fault-proxy.ts";
import { freePort, makePdf } from "@docstore/shared/testing";
import { removeDir, serviceAround, uniqueName, type Service } from "./harness.ts";

const TYPES = path.resolve(import.meta.dirname, "../packages/client/src/openapi-types.ts");

let svc: Service;
const openapi = async (): Promise<any> => (await fetch(new URL("/openapi.json", svc.url))).json();
let client: DocstoreClient;

serviceAround({}, (started) => {
  svc = started;
  client = new DocstoreClient({ url: svc.url, token: svc.token });
});

describe("the client's types", () => {
  it("are what the running service's /openapi.json gives (regenerate with pnpm --filter @docstore/client generate)", async () => {
    const document = await openapi();
    expect(await generateTypes(document)).toBe(readFileSync(TYPES, "utf8"));
  });

  it("cover every JSON operation of the document with a method", async () => {
    const document = normalize(await openapi());
    const operations = Object.entries(document.paths as Record<string, object>).flatMap(([p, methods]) =>
      Object.keys(methods).map((m) => `${m} ${p}`),
    );
    expect(operations.sort()).toEqual(Object.keys(OPERATIONS).sort());
    for (const method of Object.values(OPERATIONS)) expect(typeof client[method]).toBe("function");
  });

  it("do not depend on prose: descriptions, examples, operation ids and error answers can change", async () => {
    const document = await openapi();
    const reworded = structuredClone(document);
    for (const [p, methods] of Object.entries(reworded.paths as Record<string, Record<string, any>>)) {
      for (const [m, op] of Object.entries(methods)) {
        op.operationId = `${m}${p.replace(/\W/g, "_")}`;
        op.summary = "reworded";
        op.description = "a longer description";
        op.responses["404"] = {
          description: "not found",
          content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
        };
        for (const param of op.parameters ?? []) {
          param.description = "a parameter";
          param.example = "x";
        }
      }
    }
    reworded.components.schemas = { Problem: { type: "object", properties: { title: { type: "string" } } } };
    expect(await generateTypes(reworded)).toBe(await generateTypes(document));
    // A renamed field is a change of shape, and shows.
    const renamed = structuredClone(document);
    const props = renamed.paths["/get_document_status"].get.responses["200"].content["application/json"].schema.properties;
    props.sha_256 = props.sha256;
    delete props.sha256;
    expect(await generateTypes(renamed)).not.toBe(await generateTypes(document));
  });
});

describe("operations", () => {
  it("load, search, read and delete through typed functions", async () => {
    const c = uniqueName("client");
    const text = await client.loadText(c, "The billing cluster had a database outage.", {
      docId: "INC1",
      metadata: { status: "open", priority: 1 },
      wait: true,
    });
    expect(text).toMatchObject({ collection_name: c, doc_id: "INC1", status: "ready", version: 1 });
    const file = await client.loadDocument(
      c,
      { data: new TextEncoder().encode("# Runbook\n\nRestart the replica when lag grows."), filename: "runbook.md" },
      { metadata: { sys_id: "KB1" }, wait: true },
    );
    expect(file).toMatchObject({ doc_id: "KB1", status: "ready" });
    const bulk = await client.loadTexts(
      c,
      [{ doc_id: "INC2", text: "Printer jam on floor two", metadata: { status: "closed" } }, { text: "Replica lag alarms" }],
      { wait: true },
    );
    expect(bulk.map((d) => d.status)).toEqual(["ready", "ready"]);

    const found = await client.search("database outage", { collections: [c], filter: "status=open", k: 3 });
    expect(found.results.map((r) => r.doc_id)).toEqual(["INC1"]);
    expect(found.results[0]!.score).toBeGreaterThan(0);

    const status = await client.documentStatus(c, "KB1");
    expect(status).toMatchObject({ filename: "runbook.md", content_type: "text/markdown", status: "ready" });
    expect(status.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await client.listCollections()).find((x) => x.name === c)).toMatchObject({ documents: 4, ready: 4 });
    const chunks = [];
    for await (const chunk of client.chunks(c, "KB1")) chunks.push(chunk);
    expect(chunks).toMatchObject([{ chunk_index: 0, start: 0, heading_path: ["Runbook"] }]);
    expect(chunks[0]!.text).toContain("Restart the replica");
    const closed = await client.listDocuments(c, { filter: "status=closed" });
    expect(closed.documents.map((d) => d.doc_id)).toEqual(["INC2"]);
    expect((await client.listDocuments(c, { status: "ready" })).documents).toHaveLength(4);
    const tagged = await client.contentByTag(c, { filter: "status=closed" });
    expect(tagged.documents.map((d) => d.text)).toEqual(["Printer jam on floor two"]);

    expect(await client.deleteDocument(c, "INC2")).toEqual({ deleted: true, collection_name: c, doc_id: "INC2" });
    expect(await client.deleteCollection(c)).toEqual({ deleted: true, collection_name: c, documents: 3 });
    expect(await client.health()).toEqual({ status: "ok" });
    expect((await client.ready()).status).toBe("ready");
  });

  it("raise problem details as a typed error with every member", async () => {
    const c = uniqueName("client");
    await client.loadText(c, "some text", { metadata: { status: "open" } });
    const filter = await client.search("text", { collections: [c], filter: "status=open^priority>" }).catch((e: unknown) => e);
    expect(filter).toBeInstanceOf(ProblemError);
    const p = filter as ProblemError;
    expect(p).toMatchObject({ status: 400, title: "Bad Request", type: "about:blank", instance: "/get_relevant_documents" });
    expect(p.detail).toMatch(/^metadata: /);
    expect(p.position).toBeGreaterThan(0);
    expect(p.requestId).toMatch(/\S/);
    expect(p.message).toBe(`400 Bad Request: ${p.detail}`);

    const missing = (await client.documentStatus(c, "nope").catch((e: unknown) => e)) as ProblemError;
    expect(missing).toMatchObject({ status: 404, detail: `unknown document nope in collection ${c}` });
    const refused = (await client
      .loadDocument(c, { data: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]), filename: "x.png" })
      .catch((e: unknown) => e)) as ProblemError;
    expect(refused.status).toBe(415);
    expect(refused.problem.media_type).toBe("image/png");
    const stranger = new DocstoreClient({ url: svc.url, token: "not-a-token-0123456789" });
    expect(await stranger.listCollections().catch((e: unknown) => e)).toMatchObject({ status: 401 });
    await client.deleteCollection(c);
  });

  it("says so when the service cannot be reached", async () => {
    const port = await freePort();
    const nobody = new DocstoreClient({ url: `http://127.0.0.1:${port}`, retry: { attempts: 2, baseDelayMs: 1 } });
    const err = await nobody.health().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toBe(`cannot reach http://127.0.0.1:${port}: ECONNREFUSED`);
  });
});

describe("through a proxy that answers 503 and 429", () => {
  let proxy: FaultProxy;
  beforeAll(async () => {
    proxy = await startFaultProxy(svc.url);
  });
  afterAll(() => proxy.close());

  it("retries as Retry-After says, and the load happens once", async () => {
    const c = uniqueName("retry");
    const retries: RetryInfo[] = [];
    const viaProxy = new DocstoreClient({ url: proxy.url, token: svc.token, onRetry: (i) => retries.push(i) });
    proxy.seen.length = 0;
    let n = 0;
    proxy.rule = () => (++n === 1 ? { reply: 503, retryAfter: "1" } : n === 2 ? { reply: 429, retryAfter: "0" } : undefined);
    const r = await viaProxy.loadText(c, "retried text", { docId: "R1" });
    expect(r).toMatchObject({ doc_id: "R1", version: 1 });
    expect(proxy.seen.map((s) => s.status)).toEqual([503, 429, 202]);
    expect(retries.map((i) => [i.attempt, i.status, i.delayMs, i.retryAfter])).toEqual([
      [1, 503, 1000, true],
      [2, 429, 0, true],
    ]);
    proxy.rule = () => undefined;
    await client.deleteCollection(c);
  });

  it("backs off without Retry-After, and gives up after the attempts with the last problem", async () => {
    const retries: RetryInfo[] = [];
    const viaProxy = new DocstoreClient({
      url: proxy.url,
      token: svc.token,
      retry: { attempts: 3, baseDelayMs: 10 },
      onRetry: (i) => retries.push(i),
    });
    proxy.seen.length = 0;
    proxy.rule = () => ({ reply: 503 });
    const err = (await viaProxy.listCollections().catch((e: unknown) => e)) as ProblemError;
    expect(err).toBeInstanceOf(ProblemError);
    expect(err.status).toBe(503);
    expect(proxy.seen).toHaveLength(3);
    expect(retries.map((i) => i.retryAfter)).toEqual([false, false]);
    expect(retries[1]!.delayMs).toBeGreaterThanOrEqual(10);
    expect(retries[1]!.delayMs).toBeLessThanOrEqual(20);
    proxy.rule = () => undefined;
  });

  it("does not wait longer than its longest wait: a long Retry-After is raised at once", async () => {
    const viaProxy = new DocstoreClient({ url: proxy.url, token: svc.token, retry: { maxDelayMs: 30_000 } });
    proxy.seen.length = 0;
    proxy.rule = () => ({ reply: 429, retryAfter: "120" });
    const err = (await viaProxy.health().catch((e: unknown) => e)) as ProblemError;
    expect(err).toMatchObject({ status: 429, retryAfter: 120 });
    expect(proxy.seen).toHaveLength(1);
    proxy.rule = () => undefined;
  });
});

describe("async iteration", () => {
  it("pages through lists with limit and cursor", async () => {
    const c = uniqueName("pages");
    const documents = Array.from({ length: 25 }, (_, i) => ({
      doc_id: `D${String(i).padStart(2, "0")}`,
      text: `document number ${i}`,
      metadata: { priority: i % 3 },
    }));
    await client.loadTexts(c, documents, { wait: true });
    const proxy = await startFaultProxy(svc.url);
    try {
      const viaProxy = new DocstoreClient({ url: proxy.url, token: svc.token });
      const listed = [];
      for await (const d of viaProxy.documents(c, { pageSize: 10 })) listed.push(d.doc_id);
      expect(listed).toEqual(documents.map((d) => d.doc_id));
      const pages = proxy.seen.filter((s) => s.path === "/get_list_of_documents_names");
      expect(pages.map((s) => s.query.get("limit"))).toEqual(["10", "10", "10"]);
      expect(pages[0]!.query.has("cursor")).toBe(false);
      expect(pages.slice(1).every((s) => s.query.get("cursor"))).toBe(true);

      const matching = [];
      for await (const d of viaProxy.contents(c, { filter: "priority=1^ORDERBYdoc_id", pageSize: 3 })) matching.push(d.doc_id);
      expect(matching).toEqual(documents.filter((d) => d.metadata.priority === 1).map((d) => d.doc_id));
      expect(proxy.seen.filter((s) => s.path === "/get_content_by_tag")).toHaveLength(3);
    } finally {
      await proxy.close();
      await client.deleteCollection(c);
    }
  });
});

describe("the examples of docs/cli-and-client.md", () => {
  const page = readFileSync(path.resolve(import.meta.dirname, "../docs/cli-and-client.md"), "utf8");
  const block = (lang: string, after: string) => {
    const from = page.indexOf(after);
    if (from < 0) throw new Error(`docs/cli-and-client.md has no section ${after}`);
    const start = page.indexOf("```" + lang + "\n", from) + lang.length + 4;
    return page.slice(start, page.indexOf("```\n", start));
  };
  const run = async (cmd: string, args: string[], cwd: string) => {
    const r = await runProcess(cmd, args, { cwd, env: { DOCSTORE_URL: svc.url, DOCSTORE_TOKEN: svc.token } });
    return { code: r.code, out: r.stdout + r.stderr };
  };
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "docstore-docs-"));
  });
  afterAll(() => removeDir(dir));

  it("TypeScript: the client example runs as written", async () => {
    writeFileSync(path.join(dir, "runbook.pdf"), await makePdf([["Runbook: restart the replica when lag grows."]]));
    // The one change: the package's name resolves from this checkout, not from the temporary folder.
    const code = block("ts", "## TypeScript client").replace(
      '"@docstore/client"',
      JSON.stringify(pathToFileURL(path.resolve(import.meta.dirname, "../packages/client/src/index.ts")).href),
    );
    writeFileSync(path.join(dir, "example.ts"), code);
    const r = await run(process.execPath, ["example.ts"], dir);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("INC001 ");
    expect(r.out).toMatch(/^400 metadata: .* \d+$/m);
    expect((await client.documentStatus("kb", (await client.listDocuments("kb")).documents[0]!.doc_id)).status).toBe("ready");
    await client.deleteCollection("incidents");
    await client.deleteCollection("kb");
  });

  it("Python: the standard-library example uploads, searches and reports problems", async () => {
    writeFileSync(path.join(dir, "runbook.md"), "# Runbook\n\nRestart the replica when lag grows.\n");
    writeFileSync(path.join(dir, "example.py"), block("python", "## Python, with the standard library only"));
    const r = await run("python3", ["example.py"], dir);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/'doc_id': 'KB0001'.*'status': 'ready'/);
    expect(r.out).toMatch(/^[\d.]+ KB0001 # Runbook/m);
    await client.deleteCollection("kb");
  });
});

describe("the README's first load and search", () => {
  it("runs as written with curl, and the search finds what was loaded", async () => {
    const readme = readFileSync(path.resolve(import.meta.dirname, "../README.md"), "utf8");
    const from = readme.indexOf("## A first load and search");
    expect(from).toBeGreaterThan(0);
    const start = readme.indexOf("```sh\n", from) + "```sh\n".length;
    const script = readme.slice(start, readme.indexOf("```\n", start));
    // The one change: the address and token are this test's service's.
    const [first, ...rest] = script.split("\n");
    expect(first).toMatch(/^export DS=http:\/\/127\.0\.0\.1:8080 TOKEN=ds_yourtoken/);
    const dir = mkdtempSync(path.join(tmpdir(), "docstore-readme-"));
    try {
      writeFileSync(path.join(dir, "runbook.md"), "# Runbook\n\nRestart the replica when the database outage alarm fires.\n");
      writeFileSync(path.join(dir, "first.sh"), ["set -e", `DS=${svc.url} TOKEN=${svc.token}`, ...rest].join("\n"));
      const ran = await runProcess("bash", ["first.sh"], { cwd: dir });
      const out = { code: ran.code, out: ran.stdout + ran.stderr };
      expect(out.code, out.out).toBe(0);
      // curl prints each answer without a newline: read them one JSON object after another.
      const answers: Record<string, any>[] = [];
      for (let rest = out.out.trim(); rest; ) {
        let end = rest.indexOf("}");
        for (;;) {
          try {
            answers.push(JSON.parse(rest.slice(0, end + 1)));
            break;
          } catch {
            end = rest.indexOf("}", end + 1);
            if (end < 0) throw new Error(`not JSON: ${rest}`);
          }
        }
        rest = rest.slice(end + 1).trim();
      }
      expect(answers.map((a) => a.status ?? Object.keys(a).join(","))).toEqual([
        "ready",
        "ready",
        "results",
        "documents,next_cursor",
        "collections",
      ]);
      expect(answers[2]!.results[0]).toMatchObject({ doc_id: "INC001", collection_name: "incidents" });
      expect(answers[3]!.documents.map((d: { doc_id: string }) => d.doc_id)).toEqual(["INC001"]);
      expect(answers[4]!.collections.map((c: { name: string }) => c.name)).toEqual(expect.arrayContaining(["incidents", "kb"]));
    } finally {
      removeDir(dir);
      await client.deleteCollection("incidents");
      await client.deleteCollection("kb");
    }
  });
});
