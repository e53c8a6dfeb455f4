/**
 * Real documents through the whole service: each fixture ends with the right status and
 * reason, search results cite pages, and the service keeps answering throughout.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import { serviceAround, uniqueName, until, type Service } from "./harness.ts";
import { indexRows, makePdf, makeScannedPdf } from "@docstore/shared/testing";
import { makeDocx, makeOdt, makePptx, makeXlsx, makeZipBomb } from "@docstore/shared/testing";

let svc: Service;
const c = uniqueName("docs");

serviceAround({ env: { EXTRACT_TIMEOUT_MS: "20000" } }, (started) => (svc = started));

async function upload(name: string, bytes: Uint8Array, type = "application/octet-stream", docId = name.replace(/[^A-Za-z0-9]/g, "-")) {
  const form = new FormData();
  form.append("file", new Blob([bytes], { type }), name);
  form.append("metadata", JSON.stringify({ type: "fixture" }));
  return svc.request("POST", "/load_document_to_collection", { query: { collection_name: c, doc_id: docId, wait: "true" }, form });
}

async function search(query: string, k = 3) {
  const r = await svc.request("GET", "/get_relevant_documents", { query: { query, collection_names: c, k } });
  expect(r.status).toBe(200);
  return r.body.results as { doc_id: string; text: string; page?: number; sheet?: string; slide?: number; heading_path?: string[] }[];
}

const pages = (n: number) =>
  Array.from({ length: n }, (_, i) => [
    `Chapter ${i + 1}`,
    "",
    ...Array.from({ length: 20 }, (_, j) => `Line ${j} of page ${i + 1} talks about ordinary things.`),
  ]);

describe("PDF", () => {
  it("finds a phrase from page 3 and reports page 3", async () => {
    const content = pages(5);
    content[2]!.push("The quartz resonator drifts when the cabinet warms.");
    const r = await upload("report.pdf", await makePdf(content), "application/pdf");
    expect(r.body).toMatchObject({ status: "ready" });
    const status = await svc.request("GET", "/get_document_status", { query: { collection_name: c, id_value: "report-pdf" } });
    expect(status.body.content_type).toBe("application/pdf");
    const [hit] = await search("quartz resonator cabinet");
    expect(hit).toMatchObject({ doc_id: "report-pdf", page: 3 });
    expect(hit!.text).toContain("quartz resonator");
  });

  it.each([
    ["encrypted.pdf", () => readFileSync(path.join(import.meta.dirname, "fixtures/encrypted.pdf")), "encrypted PDF"],
    ["scanned.pdf", () => makeScannedPdf(), "no extractable text"],
    ["truncated.pdf", async () => (await makePdf(pages(3))).slice(0, 900), "corrupt or truncated PDF"],
  ])("fails %s with the reason", async (name, make, reason) => {
    const r = await upload(name, await make(), "application/pdf");
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("failed");
    expect(r.body.error).toContain(reason);
  });

  it("refuses random bytes named .pdf with 415", async () => {
    const noise = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 251);
    const r = await upload("random.pdf", noise, "application/pdf");
    expect(r.status).toBe(415);
    expect(r.body.detail).toMatch(/^file: unrecognised binary content; accepted: text\/plain, .*application\/pdf/);
  });
});

describe("Office documents", () => {
  it("reads DOCX and ODT with their heading paths, and keeps table rows whole", async () => {
    expect((await upload("report.docx", await makeDocx())).body).toMatchObject({ status: "ready" });
    const [hit] = await search("Regional results North South revenue");
    expect(hit?.doc_id).toBe("report-docx");
    expect(hit?.text).toContain("North | 1200");
    expect((await upload("report.odt", makeOdt())).body).toMatchObject({ status: "ready" });
    const odt = (await search("Growth continues next year", 10)).find((h) => h.doc_id === "report-odt");
    expect(odt?.text).toContain("Growth continues next year.");
  });

  it("reads XLSX sheets and PPTX slides and cites them", async () => {
    expect((await upload("people.xlsx", await makeXlsx())).body.status).toBe("ready");
    const [row] = await search("Grace 45");
    expect(row).toMatchObject({ doc_id: "people-xlsx", sheet: "People" });
    expect(row!.text).toContain("Name: Grace | Age: 45");
    expect((await upload("review.pptx", await makePptx())).body.status).toBe("ready");
    const [slide] = await search("hire two engineers");
    expect(slide).toMatchObject({ doc_id: "review-pptx", slide: 3 });
  });

  it("fails a ZIP bomb disguised as DOCX quickly, and keeps serving", async () => {
    const started = Date.now();
    const r = await upload("bomb.docx", makeZipBomb({ kind: "deflate", declaredSize: 1000 }));
    expect(r.body.status).toBe("failed");
    expect(r.body.error).toMatch(/inflates past its declared|decompression bomb/);
    expect(Date.now() - started).toBeLessThan(15_000);
    const many = await upload("entries.docx", makeZipBomb({ kind: "entries", entries: 20_000 }));
    expect(many.body).toMatchObject({ status: "failed", error: expect.stringMatching(/too many entries/) });
    expect((await svc.request("GET", "/healthz")).status).toBe(200);
  });
});

describe("duplicates", () => {
  it("re-loading the same bytes updates the metadata without extracting again", async () => {
    const pdf = await makePdf(pages(2));
    // The chunks as stored (text, offsets, citation), without the version they belong to.
    const chunkIds = async () =>
      (await indexRows(svc.dataDir, "doc_id = 'dup' AND chunk >= 0"))
        .sort((a, b) => a.chunk - b.chunk)
        .map(({ id, text, start, end, cite }) => ({ id, text, start, end, cite }));
    const versions = async () => new Set((await indexRows(svc.dataDir, "doc_id = 'dup'")).map((r) => r.version));
    const load = (bytes: Uint8Array, status: string) => {
      const form = new FormData();
      form.append("file", new Blob([bytes], { type: "application/pdf" }), "dup.pdf");
      form.append("metadata", JSON.stringify({ status }));
      return svc.request("POST", "/load_document_to_collection", { query: { collection_name: c, doc_id: "dup", wait: "true" }, form });
    };
    expect((await load(pdf, "draft")).body).toMatchObject({ status: "ready", version: 1 });
    const before = await chunkIds();
    expect(before.length).toBeGreaterThan(0);
    expect((await load(pdf, "final")).body).toMatchObject({ status: "ready", version: 2, chunks: before.length });
    expect(await chunkIds()).toEqual(before);
    expect(await versions()).toEqual(new Set([2]));
    const hits = await svc.request("POST", "/get_relevant_documents", {
      query: { query: "Chapter ordinary things", k: 50 },
      json: { collection_names: [c], metadata: "status=final" },
    });
    expect(hits.body.results.map((h: { doc_id: string }) => h.doc_id)).toContain("dup");
    const changed = await makePdf(pages(3));
    expect((await load(changed, "final")).body).toMatchObject({ status: "ready", version: 3 });
    expect(await chunkIds()).not.toEqual(before);
    expect(await versions()).toEqual(new Set([3]));
  });
});

describe("text formats", () => {
  it("reads Latin-1 and UTF-16 texts", async () => {
    const latin1 = Buffer.from("Caf\xe9 cr\xe8me br\xfbl\xe9e: the pastry chef's notes.", "latin1");
    expect((await upload("menu.txt", latin1, "text/plain")).body.status).toBe("ready");
    expect((await search("crème brûlée"))[0]?.text).toContain("Café crème brûlée");
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("Zürich tramway timetable", "utf16le")]);
    expect((await upload("tram.txt", utf16, "text/plain")).body.status).toBe("ready");
    expect((await search("Zürich tramway"))[0]?.doc_id).toBe("tram-txt");
  });

  it("reads RTF, e-mail, CSV, NDJSON and HTML without its navigation", async () => {
    const rtf = Buffer.from(
      "{\\rtf1\\ansi\\ansicpg1252 {\\fonttbl{\\f0 Arial;}}\\f0 Boiler pressure caf\\'e9 log\\par Second paragraph}",
      "latin1",
    );
    expect((await upload("log.rtf", rtf)).body.status).toBe("ready");
    expect((await search("boiler pressure"))[0]?.text).toContain("Boiler pressure café log");

    const eml = Buffer.from(
      "From: Ops <ops@example.com>\r\nTo: team@example.com\r\nSubject: Generator test on Friday\r\nMIME-Version: 1.0\r\n" +
        "Content-Type: text/plain; charset=utf-8\r\n\r\nThe diesel generator will be tested at noon.\r\n",
    );
    expect((await upload("notice.eml", eml)).body.status).toBe("ready");
    const [mail] = await search("diesel generator noon");
    expect(mail?.text).toContain("Subject: Generator test on Friday");

    const csv = Buffer.from("city,population\nLyon,522250\nNantes,320732\n");
    expect((await upload("cities.csv", csv, "text/csv")).body.status).toBe("ready");
    expect((await search("Nantes"))[0]?.text).toContain("city: Nantes");

    const ndjson = Buffer.from('{"id":1,"event":"valve opened"}\n{"id":2,"event":"valve closed"}\n');
    expect((await upload("events.ndjson", ndjson)).body.status).toBe("ready");
    expect((await search("valve closed"))[0]?.doc_id).toBe("events-ndjson");

    const html = Buffer.from(
      "<!doctype html><html><body><nav>Home | Products | Careers</nav><main><h1>Heat pumps</h1>" +
        "<p>A heat pump moves warmth from outside air.</p></main><script>track()</script><footer>Copyright</footer></body></html>",
    );
    expect((await upload("kb.html", html, "text/html")).body.status).toBe("ready");
    const [page] = await search("heat pump warmth");
    expect(page).toMatchObject({ doc_id: "kb-html", heading_path: ["Heat pumps"] });
    expect(page!.text).not.toMatch(/Careers|track\(\)|Copyright/);
  });

  it("keeps answering while documents are processed", async () => {
    const pending = upload("big.pdf", await makePdf(pages(40)), "application/pdf", "big");
    await until(async () => (await svc.request("GET", "/healthz")).status === 200);
    expect((await pending).body.status).toBe("ready");
  });
});
