import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startService, uniqueName, type Service } from "./harness.ts";
import { startOpenAIServer } from "@docstore/shared/testing";

type FakeOpenAI = Awaited<ReturnType<typeof startOpenAIServer>>;
let openai: FakeOpenAI;
let svc: Service;

beforeAll(async () => {
  openai = await startOpenAIServer({ dimensions: 64 });
  svc = await startService({
    env: openai.serviceEnv,
  });
}, 60_000);

afterAll(async () => {
  await svc.stop();
  await openai.stop();
  removeDir(svc.dataDir);
});

const load = (collection: string, docId: string, text: string) =>
  svc.request("POST", "/load_text_to_collection", { query: { collection_name: collection, doc_id: docId, wait: "true" }, json: { text } });

describe("with an OpenAI-compatible embedder", () => {
  it("embeds chunks once, even when the same text is loaded again", async () => {
    const c = uniqueName();
    const before = openai.inputs;
    expect((await load(c, "a", "The reactor cooling loop lost pressure overnight.")).body.status).toBe("ready");
    const afterFirst = openai.inputs;
    expect(afterFirst).toBeGreaterThan(before);
    expect((await load(c, "a", "The reactor cooling loop lost pressure overnight.")).body).toMatchObject({ status: "ready", version: 2 });
    expect(openai.inputs).toBe(afterFirst);
  });

  it("searches hybrid: the query is embedded and results come back ranked", async () => {
    const c = uniqueName();
    await load(c, "pump", "Centrifugal pump bearings wear out after long vibration.");
    await load(c, "billing", "Quarterly invoices are sent to customers by email.");
    const before = openai.requests;
    const r = await svc.request("GET", "/get_relevant_documents", {
      query: { query: "pump bearings vibration", collection_names: c, k: 2 },
    });
    expect(r.status).toBe(200);
    expect(r.body.results[0].doc_id).toBe("pump");
    expect(openai.requests).toBeGreaterThan(before);
  });

  it("fails a document clearly when the model's dimension does not match", async () => {
    const c = uniqueName();
    openai.failNext(1, "wrong-dimensions");
    const r = await load(c, "odd", "A text embedded by a misconfigured model.");
    expect(r.body.status).toBe("failed");
    expect(r.body.error).toMatch(/dimensional vectors but EMBEDDING_DIMENSIONS/);
    expect((await load(c, "odd", "A text embedded by a well configured model.")).body.status).toBe("ready");
  });
});
