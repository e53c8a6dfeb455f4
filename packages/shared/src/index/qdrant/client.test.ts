import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { QdrantClientTimeoutError, QdrantClientUnexpectedResponseError } from "@qdrant/js-client-rest";
import { UnavailableError } from "../../errors.ts";
import { createQdrantClient, qdrantError, statusOf } from "./client.ts";

const apiError = (status: number, error: string) => Object.assign(new Error("Bad Request"), { status, data: { status: { error } } });

describe("Qdrant errors", () => {
  it("turn an unreachable Qdrant into a 503 that keeps the cause", () => {
    const refused = new TypeError("fetch failed");
    const err = qdrantError("search", refused);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ kind: "unavailable", cause: refused });
    expect(err.message).toMatch(/Qdrant is unavailable \(search\): fetch failed/);
    expect(qdrantError("search", new QdrantClientTimeoutError("timed out"))).toBeInstanceOf(UnavailableError);
    expect(qdrantError("search", apiError(503, "shutting down"))).toBeInstanceOf(UnavailableError);
    expect(qdrantError("search", apiError(429, "too many"))).toBeInstanceOf(UnavailableError);
  });

  it("keep a rejected request a server error with Qdrant's reason", () => {
    const err = qdrantError("write points", apiError(400, "Wrong input: Vector dimension error"));
    expect(err).not.toBeInstanceOf(UnavailableError);
    expect(err.message).toBe("Qdrant rejected a request (write points): 400 Wrong input: Vector dimension error");
  });

  it("read the status of either kind of client error", () => {
    expect(statusOf(apiError(404, "missing"))).toBe(404);
    expect(statusOf(new QdrantClientUnexpectedResponseError("Unexpected Response: 409 (Conflict)\nRaw response content:"))).toBe(409);
    expect(statusOf(new Error("x"))).toBeUndefined();
  });

  it("come from a real client that cannot connect", async () => {
    const client = createQdrantClient({ url: "http://127.0.0.1:1", timeoutMs: 2000 });
    const err = await client.versionInfo().catch((e: unknown) => qdrantError("ping", e));
    expect(err).toBeInstanceOf(UnavailableError);
  });
});

describe("the Qdrant client", () => {
  it("asks for uncompressed answers (compressing them cost Qdrant and this process more than the search)", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ title: "qdrant", version: "1.18.3" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = createQdrantClient({ url: `http://127.0.0.1:${port}`, apiKey: "k" });
      expect(await client.versionInfo()).toMatchObject({ version: "1.18.3" });
      expect(seen).toHaveLength(1);
      expect(seen[0]!["accept-encoding"]).toBe("identity");
      expect(seen[0]!["api-key"]).toBe("k");
    } finally {
      server.close();
    }
  });
});
