import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startService, uniqueName, type Service } from "./harness.ts";

const READER = "reader-token-0123456789";
const WRITER = "writer-token-0123456789";
const ADMIN = "admin-token-0123456789ab";
let svc: Service;

beforeAll(async () => {
  svc = await startService({ env: { API_TOKENS: `${READER}:read,${WRITER}:read+write,${ADMIN}` } });
});

afterAll(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});

describe("scoped tokens", () => {
  it("enforces read, write and admin scopes", async () => {
    const c = uniqueName();
    const load = { query: { collection_name: c, wait: "true" }, json: { text: "scoped" } };
    const denied = await svc.request("POST", "/load_text_to_collection", { ...load, token: READER });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toBe("this token lacks the 'write' scope");
    expect((await svc.request("POST", "/load_text_to_collection", { ...load, token: WRITER })).status).toBe(200);
    expect((await svc.request("GET", "/get_list_of_collection", { token: READER })).status).toBe(200);
    expect((await svc.request("DELETE", "/delete_collection", { query: { collection_name: c }, token: WRITER })).status).toBe(403);
    expect((await svc.request("DELETE", "/delete_collection", { query: { collection_name: c }, token: ADMIN })).status).toBe(200);
  });

  it("prints no token when tokens are configured", () => {
    expect(svc.output).not.toContain(READER);
  });
});

describe("configuration", () => {
  it("refuses to start on bad configuration, naming the variable", async () => {
    await expect(startService({ env: { INDEX: "elastic" } })).rejects.toThrow(/INDEX/);
    await expect(startService({ env: { PORT: "http" } })).rejects.toThrow(/PORT/);
    await expect(startService({ env: { API_TOKENS: "short" } })).rejects.toThrow(/API_TOKENS/);
  });

  it("starts with INDEX=qdrant and reports an unreachable Qdrant as not ready, with 503s", async () => {
    const svc = await startService({ env: { INDEX: "qdrant", QDRANT_URL: "http://127.0.0.1:9" } });
    const ready = await svc.request("GET", "/readyz", { token: null });
    expect(ready.status).toBe(503);
    expect(ready.body.checks.index).toMatch(/qdrant|unavailable/i);
    expect(ready.body.checks.catalog).toBe("ok");
    const load = await svc.request("POST", "/load_text_to_collection", { query: { collection_name: "q" }, json: { text: "hello" } });
    expect(load.status).toBe(202);
    const search = await svc.request("GET", "/get_relevant_documents", { query: { query: "hello", collection_names: "q" } });
    expect(search.status).toBe(503);
    expect(search.headers.get("content-type")).toMatch(/problem\+json/);
    await svc.stop();
    removeDir(svc.dataDir);
  });

  it("keeps the generated token across restarts", async () => {
    const first = await startService();
    await first.stop();
    const second = await startService({ dataDir: first.dataDir });
    expect(second.token).toBe(first.token);
    expect((await second.request("GET", "/get_list_of_collection")).status).toBe(200);
    await second.stop();
    removeDir(first.dataDir);
  });
});
