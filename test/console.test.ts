/**
 * The console driven in headless Chromium against the real service: one test per view, each
 * checked against what the API answers. The page runs under the console's own
 * Content-Security-Policy, so a script or style from elsewhere, or inline, would fail here.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { describeSkipped, makePdf } from "@docstore/shared/testing";
import { removeDir, startService, uniqueName, type Service } from "./harness.ts";
import { CHROMIUM_SKIP, hasChromium, launchChromium, type Browser } from "./browser.ts";

// Functions handed to page.evaluate run in the browser; these are its globals they read (this
// project's type check has no DOM library, and a string expression would need 'unsafe-eval').
declare const document: { getElementById(id: string): { dataset: Record<string, string | undefined> } | null };
declare let location: { hash: string };
declare const sessionStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };
declare const localStorage: { length: number };

if (!hasChromium()) describeSkipped("console in headless Chromium", CHROMIUM_SKIP);

const TEXTS = [
  { doc_id: "n1", text: "Herons wade in the marsh at dawn.", metadata: { team: "red", priority: 1 } },
  { doc_id: "n2", text: "The pump room floods in spring.", metadata: { team: "blue", priority: 2 } },
  { doc_id: "n3", text: "A heron waded past the cooling tower.", metadata: { team: "red", priority: 3 } },
  { doc_id: "n4", text: "Storks migrate south in autumn.", metadata: { team: "blue", priority: 4 } },
  { doc_id: "n5", text: "Rack five lost power during the storm.", metadata: { team: "red", priority: 5 } },
];
const BROKEN = "%PDF-1.4\nnot really a pdf";
const PDF_PAGES = [
  ["Chapter 1", "", "The plant opened in spring with three pumps."],
  ["Chapter 2", "", "Maintenance of the pumps is due every month."],
  ["Chapter 3", "", "The quartz resonator drifts when the cabinet warms."],
];

describe.skipIf(!hasChromium())("console in headless Chromium", () => {
  let svc: Service;
  let browser: Browser;
  const c = uniqueName("console");

  beforeAll(async () => {
    svc = await startService();
    browser = await launchChromium();
    const bulk = await svc.request("POST", "/load_texts_to_collection", {
      query: { collection_name: c, wait: "true" },
      json: { documents: TEXTS },
    });
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(200);
    expect(
      await upload(c, "broken", new Blob([BROKEN], { type: "application/pdf" }), "broken.pdf", { team: "red", priority: 9 }),
    ).toMatchObject({ status: "failed" });
    const pdf = new Blob([await makePdf(PDF_PAGES)], { type: "application/pdf" });
    expect(await upload(c, "report", pdf, "report.pdf", { team: "blue", priority: 1 })).toMatchObject({ status: "ready" });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (svc) {
      expect(await svc.stop()).toBe(0);
      removeDir(svc.dataDir);
    }
  });

  async function upload(collection: string, docId: string, file: Blob, name: string, metadata: object) {
    const form = new FormData();
    form.append("file", file, name);
    form.append("metadata", JSON.stringify(metadata));
    const r = await svc.request("POST", "/load_document_to_collection", {
      query: { collection_name: collection, doc_id: docId, wait: "true" },
      form,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  }

  /** A new tab (its own sessionStorage) that records script errors and refused loads. */
  async function newTab(): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.context.newPage();
    page.setDefaultTimeout(10_000);
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
    page.on("console", (m) => {
      if (/Content.Security.Policy|Refused to/i.test(m.text())) errors.push(`console: ${m.text()}`);
    });
    return { page, errors };
  }

  /** Resolves once the view for the location is shown whole (the shell marks it on <main>). */
  const shown = (page: Page) => page.waitForFunction(() => document.getElementById("main")?.dataset.shown === location.hash);
  const hashOf = (page: Page): Promise<string> => page.evaluate(() => location.hash);

  /** Does `act`, which changes the location, and waits until the new view is shown. */
  async function navigate(page: Page, act: () => Promise<unknown>) {
    const before = await hashOf(page);
    await act();
    await page.waitForFunction((b) => location.hash !== b && document.getElementById("main")?.dataset.shown === location.hash, before);
  }

  async function enterToken(page: Page, token: string) {
    await page.fill("#token-input", token);
    await page.click("#token-form button");
  }

  /** Enters the service's token in the token prompt and waits until the view is shown. */
  async function signIn(page: Page) {
    await enterToken(page, svc.token);
    await shown(page);
  }

  /** The prompt is shown again saying the token was refused, and no token is kept. */
  async function expectRefused(page: Page) {
    await page.waitForSelector("#token-prompt:not([hidden]) #token-error .problem");
    expect(await page.textContent("#token-error")).toMatch(/401 Unauthorized.*unknown bearer token/);
    expect(await page.evaluate(() => sessionStorage.getItem("docstore.token"))).toBeNull();
  }

  async function signedIn(hash = "#/") {
    const tab = await newTab();
    await tab.page.goto(`${svc.url}/console/${hash}`);
    await signIn(tab.page);
    return tab;
  }

  const rows = (page: Page, table: string) =>
    page.$$eval(`${table} tbody tr`, (trs) => trs.map((tr) => tr.getAttribute("data-doc") ?? tr.getAttribute("data-collection")));
  const texts = (page: Page, selector: string) => page.$$eval(selector, (els) => els.map((e) => e.textContent ?? ""));

  it("token prompt: asks once, keeps the token for the tab's session, asks again when it is refused", async () => {
    const { page, errors } = await newTab();
    await page.goto(`${svc.url}/`);
    expect(page.url()).toBe(`${svc.url}/console/`);
    expect(await page.isVisible("#token-prompt")).toBe(true);
    expect(await page.isVisible("#nav")).toBe(false);

    await enterToken(page, "ds_wrong");
    await expectRefused(page);

    await signIn(page);
    expect(await page.isVisible("#token-prompt")).toBe(false);
    expect(await page.evaluate(() => [sessionStorage.getItem("docstore.token"), localStorage.length])).toEqual([svc.token, 0]);

    // Asked once: a reload keeps it.
    await page.reload();
    await shown(page);
    expect(await page.isVisible("#token-prompt")).toBe(false);
    expect(await rows(page, "#collections")).toContain(c);

    // A token the service no longer takes brings the prompt back, saying why.
    await page.evaluate(() => sessionStorage.setItem("docstore.token", "ds_revoked"));
    await page.reload();
    await expectRefused(page);

    await signIn(page);
    await page.click("#sign-out");
    expect(await page.isVisible("#token-prompt")).toBe(true);
    expect(await page.evaluate(() => sessionStorage.getItem("docstore.token"))).toBeNull();
    expect(errors).toEqual([]);
    await page.close();
  });

  it("collections: each with its documents counted by status, failures one click away", async () => {
    const { page, errors } = await signedIn();
    const api = (await svc.request("GET", "/get_list_of_collection")).body.collections.find((x: { name: string }) => x.name === c);
    expect(api).toEqual({ name: c, documents: 7, ready: 6, pending: 0, failed: 1 });
    const row = `#collections tr[data-collection="${c}"]`;
    const counts = await page.$$eval(`${row} td[data-count]`, (tds) => tds.map((td) => [td.getAttribute("data-count"), td.textContent]));
    expect(counts).toEqual([
      ["documents", "7"],
      ["ready", "6"],
      ["pending", "0"],
      ["failed", "1"],
    ]);

    await navigate(page, () => page.click(`${row} td[data-count="failed"] a`));
    expect(await hashOf(page)).toBe(`#/collections/${c}?status=failed`);
    expect(await rows(page, "#documents")).toEqual(["broken"]);
    expect(await page.textContent('#documents tr[data-doc="broken"] .reason')).toMatch(/PDF/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("documents: status, version, size, type and failure reason, selected with the filter language", async () => {
    const { page, errors } = await signedIn(`#/collections/${c}`);
    expect(await rows(page, "#documents")).toEqual(["broken", "n1", "n2", "n3", "n4", "n5", "report"]);
    const broken = await texts(page, '#documents tr[data-doc="broken"] td');
    expect(broken.slice(0, 8)).toEqual([
      "broken",
      "broken.pdf",
      "failed",
      "1",
      `${BROKEN.length} B`,
      "application/pdf",
      "0",
      expect.stringMatching(/PDF/),
    ]);
    expect((await texts(page, '#documents tr[data-doc="n1"] td')).slice(2, 8)).toEqual([
      "ready",
      "1",
      `${TEXTS[0]!.text.length} B`,
      "text/plain",
      "1",
      "",
    ]);

    await page.fill("#filter", "team=red^priority>=3");
    await navigate(page, () => page.click("#documents-filter button"));
    expect(await rows(page, "#documents")).toEqual(["broken", "n3", "n5"]);
    expect(await page.textContent("#documents-summary")).toBe("3 documents matching");

    await page.selectOption("#status", "ready");
    await navigate(page, () => page.click("#documents-filter button"));
    expect(await rows(page, "#documents")).toEqual(["n3", "n5"]);

    // A filter the service cannot parse: its problem details, with the position marked.
    await page.fill("#filter", "team=red^priorityBETWEEN1");
    await navigate(page, () => page.click("#documents-filter button"));
    expect(await page.textContent(".problem .problem-title")).toBe("400 Bad Request");
    expect(await page.textContent(".problem .problem-detail")).toMatch(/^tag_info: /);
    const position = (
      await svc.request("GET", "/get_list_of_documents_names", { query: { collection_name: c, tag_info: "team=red^priorityBETWEEN1" } })
    ).body.position;
    expect(await page.textContent(".problem-at")).toBe("team=red^priorityBETWEEN1" + (position >= 25 ? " " : ""));
    expect(await page.textContent(".problem-at mark")).toBe("team=red^priorityBETWEEN1".charAt(position) || " ");
    expect(await page.isVisible("#documents")).toBe(false);

    // Past a page (50): the rest one click away, in doc_id order.
    const many = uniqueName("many");
    const documents = Array.from({ length: 60 }, (_, i) => ({ doc_id: `m${String(i).padStart(2, "0")}`, text: `item ${i}` }));
    expect((await svc.request("POST", "/load_texts_to_collection", { query: { collection_name: many }, json: { documents } })).status).toBe(
      202,
    );
    await navigate(page, () => page.evaluate((hash) => (location.hash = hash), `#/collections/${many}`));
    expect(await rows(page, "#documents")).toEqual(documents.slice(0, 50).map((d) => d.doc_id));
    expect(await page.textContent("#documents-summary")).toBe("50 documents so far");
    await page.click("#more");
    await page.waitForSelector("#more", { state: "hidden" });
    expect(await rows(page, "#documents")).toEqual(documents.map((d) => d.doc_id));
    expect(await page.textContent("#documents-summary")).toBe("60 documents");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("a document: its metadata, and its chunks with their citations", async () => {
    const { page, errors } = await signedIn(`#/collections/${c}`);
    await navigate(page, () => page.click('#documents a:text-is("report")'));
    expect(await hashOf(page)).toBe(`#/collections/${c}/documents/report`);
    const facts = await page.$$eval("#document-facts dt, #document-facts dd", (els) => els.map((e) => e.textContent));
    expect(facts).toEqual(expect.arrayContaining(["Status", "ready", "Type", "application/pdf"]));
    expect(
      await page.$$eval("#metadata tr", (trs) =>
        trs.map((tr) => [tr.querySelector("th")?.textContent, tr.querySelector("td")?.textContent]),
      ),
    ).toEqual([
      ["priority", "1"],
      ["team", "blue"],
    ]);

    const api = (await svc.request("GET", "/get_document_chunks", { query: { collection_name: c, id_value: "report" } })).body;
    expect(api.chunks.length).toBeGreaterThan(0);
    const shownChunks = await page.$$eval("#chunks li", (lis) =>
      lis.map((li) => ({
        index: li.querySelector(".chunk-index")?.textContent,
        citation: li.querySelector(".citation")?.textContent,
        text: li.querySelector(".chunk-text")?.textContent,
      })),
    );
    expect(shownChunks).toEqual(
      api.chunks.map((ch: { chunk_index: number; page: number; text: string }) => ({
        index: `#${ch.chunk_index}`,
        citation: `page ${ch.page}`,
        text: ch.text,
      })),
    );
    const quartz = shownChunks.find((ch) => ch.text?.includes("quartz resonator"));
    expect(quartz?.citation).toBe("page 3");
    expect(await page.textContent("#main h2:has-text('Chunks')")).toBe(`Chunks (${api.chunks.length})`);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("search: ranked chunks with scores and the query's words marked, within collections and a filter", async () => {
    type Result = { doc_id: string; score: number };
    const apiSearch = async (): Promise<Result[]> =>
      (
        await svc.request("POST", "/get_relevant_documents", {
          query: { query: "herons wading", k: 5 },
          json: { collection_names: [c], metadata: "team=red" },
        })
      ).body.results;
    const scores = (results: Result[]) => results.map((r) => r.score.toFixed(4));
    // A maintenance run that folds rows into the index, or merges its parts, changes BM25's
    // statistics and so the scores: the console's are compared with the API's when two answers
    // of the API around the console's search agree (runs end within seconds).
    let tab: Awaited<ReturnType<typeof signedIn>>;
    let api: Result[];
    for (let attempt = 1; ; attempt++) {
      const before = await apiSearch();
      tab = await signedIn("#/search");
      await tab.page.fill("#query", "herons wading");
      await tab.page.fill("#k", "5");
      await tab.page.selectOption("#collections", [c]);
      await tab.page.fill("#search-filter", "team=red");
      await navigate(tab.page, () => tab.page.click("#search-form button"));
      api = await apiSearch();
      if (scores(before).join() === scores(api).join() || attempt === 5) break;
      await tab.page.close();
      await sleep(2_000);
    }
    const { page, errors } = tab;
    expect(api.map((r) => r.doc_id).sort()).toEqual(["n1", "n3"]);
    const hits = await page.$$eval(".hit", (lis) =>
      lis.map((li) => ({
        doc: li.querySelector(".chunk-head a")?.textContent,
        score: li.querySelector(".score")?.textContent,
        marks: [...li.querySelectorAll("mark")].map((m) => m.textContent),
      })),
    );
    expect(hits.map((x) => x.doc)).toEqual(api.map((r) => r.doc_id));
    expect(hits.map((x) => x.score)).toEqual(scores(api));
    expect(hits.find((x) => x.doc === "n1")?.marks).toEqual(["Herons", "wade"]);
    expect(hits.find((x) => x.doc === "n3")?.marks).toEqual(["heron", "waded"]);

    // A result opens its document at that chunk, citation and all; the service's stopwords (the chunk's "The", "the") are not marked.
    await page.fill("#query", "the quartz resonator");
    await page.fill("#search-filter", "");
    await navigate(page, () => page.click("#search-form button"));
    expect(await page.textContent(".hit .citation")).toBe("page 3");
    expect(await texts(page, ".hit:first-child mark")).toEqual(["quartz", "resonator"]);
    await navigate(page, () => page.click(".hit:first-child .chunk-head a"));
    expect(await page.textContent("#chunks li.focus .chunk-text")).toContain("quartz resonator");

    await page.goto(`${svc.url}/console/#/search?query=pumps&filter=priorityBETWEEN1`);
    await shown(page);
    expect(await page.textContent("#results .problem")).toMatch(/400 Bad Request.*metadata: /);
    expect(await page.isVisible("#results .problem-at mark")).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("upload: a file with metadata, its outcome, and the service's refusals shown readably", async () => {
    const target = uniqueName("uploads");
    const { page, errors } = await signedIn(`#/upload?collection=${target}`);
    expect(await page.inputValue("#upload-collection")).toBe(target);
    await page.setInputFiles("#upload-file", {
      name: "guide.md",
      mimeType: "text/markdown",
      buffer: Buffer.from("# Guide\n\nRestart the pump after a flood."),
    });
    await page.fill("#upload-metadata", '{"team": "green", "priority": 2}');
    await page.fill("#upload-doc-id", "guide");
    await page.click("#upload-form button");
    await page.waitForSelector("#upload-result .outcome");
    expect(await page.getAttribute("#upload-result .outcome", "data-status")).toBe("ready");
    expect(await page.textContent("#upload-result .outcome")).toBe(`Loaded guide into ${target}: ready version 1, 1 chunk`);
    const status = (await svc.request("GET", "/get_document_status", { query: { collection_name: target, id_value: "guide" } })).body;
    expect(status).toMatchObject({ status: "ready", filename: "guide.md", metadata: { team: "green", priority: 2 } });

    await page.fill("#upload-metadata", '{"team": green}');
    await page.click("#upload-form button");
    await page.waitForSelector("#upload-result .problem");
    expect(await page.textContent("#upload-result .problem-title")).toBe("400 Bad Request");
    expect(await page.textContent("#upload-result .problem-detail")).toMatch(/^metadata: .*not valid JSON/);

    await page.fill("#upload-metadata", "");
    await page.setInputFiles("#upload-file", {
      name: "blob.bin",
      mimeType: "application/octet-stream",
      buffer: Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]),
    });
    await page.click("#upload-form button");
    await page.waitForSelector("#upload-result .problem-title:text-is('415 Unsupported Media Type')");
    expect(await page.textContent("#upload-result .problem-detail")).toMatch(/^file: .*accepted: /);
    expect(errors).toEqual([]);
    await page.close();
  });
});
