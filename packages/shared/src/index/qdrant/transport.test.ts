/**
 * The Qdrant client on the node:http transport (transport.ts, through the patched client),
 * against real HTTP servers that answer as Qdrant does or fail as a network does. The index
 * suites run it against a real Qdrant (contract.test.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { QdrantClientTimeoutError } from "@qdrant/js-client-rest";
import { UnavailableError } from "../../errors.ts";
import { createQdrantClient, qdrantError } from "./client.ts";

type Seen = { method: string; url: string; headers: IncomingMessage["headers"]; body: string; port: number };

async function serve(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body, port: req.socket.remotePort! });
      answer(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(value));
};

describe("the Qdrant client's transport", () => {
  it("sends the requests the client builds on one kept-alive connection and reads their answers", async () => {
    // A long answer in many pieces, with characters of several bytes across their boundaries.
    const text = "héron, 鷺, 🐦 ".repeat(20_000);
    const server = await serve((req, res) => {
      if (req.url!.startsWith("/collections/c/points/scroll")) {
        json(res, 200, { result: { points: [{ id: 1, payload: { text } }], next_page_offset: null }, status: "ok", time: 0 });
      } else json(res, 200, { result: { operation_id: 7, status: "completed" }, status: "ok", time: 0 });
    });
    try {
      const client = createQdrantClient({ url: server.url });
      const points = [{ id: 1, vector: {}, payload: { text: "ünïcode" } }];
      expect(await client.upsert("c", { wait: true, points })).toEqual({ operation_id: 7, status: "completed" });
      const page = await client.scroll("c", { limit: 1, with_payload: true });
      expect(page.points[0]!.payload!.text).toBe(text);
      const [upsert, scroll] = server.seen;
      expect([upsert!.method, upsert!.url, scroll!.method, scroll!.url]).toEqual([
        "PUT",
        "/collections/c/points?wait=true",
        "POST",
        "/collections/c/points/scroll",
      ]);
      expect(JSON.parse(upsert!.body)).toEqual({ points });
      expect(upsert!.headers["content-type"]).toBe("application/json");
      expect(upsert!.headers["accept-encoding"]).toBe("identity");
      expect(Number(upsert!.headers["content-length"])).toBe(Buffer.byteLength(upsert!.body));
      expect(scroll!.port).toBe(upsert!.port); // the same connection, kept alive
    } finally {
      await server.close();
    }
  });

  it("sends a request once more when Qdrant closed the kept-alive connection it went on", async () => {
    const served = new Map<number, number>();
    const server = await serve((req, res) => {
      const port = req.socket.remotePort!;
      served.set(port, (served.get(port) ?? 0) + 1);
      // A connection's second request finds it closing, as an idle one Qdrant closes does.
      if (served.get(port)! > 1) req.socket.destroy();
      else json(res, 200, { result: { points: [], next_page_offset: null }, status: "ok", time: 0 });
    });
    try {
      const client = createQdrantClient({ url: server.url });
      expect(await client.scroll("c", { limit: 1 })).toEqual({ points: [], next_page_offset: null });
      expect(await client.scroll("c", { limit: 2 })).toEqual({ points: [], next_page_offset: null });
      const ports = server.seen.map((s) => s.port);
      expect([ports.length, ports[1] === ports[0], ports[2] === ports[1]]).toEqual([3, true, false]);
      expect(server.seen.map((s) => JSON.parse(s.body).limit)).toEqual([1, 2, 2]);
    } finally {
      await server.close();
    }
  });

  it("gives Qdrant's refusals their status and reason, and its overload a 503", async () => {
    const server = await serve((req, res) => {
      if (req.url!.includes("busy")) json(res, 503, { status: { error: "shutting down" }, time: 0 });
      else if (req.url!.includes("limited")) json(res, 429, { status: { error: "too many" }, time: 0 }, { "retry-after": "1" });
      else json(res, 400, { status: { error: "Wrong input: Vector dimension error" }, time: 0 });
    });
    try {
      const client = createQdrantClient({ url: server.url });
      const fail = (name: string) =>
        client.scroll(name, { limit: 1 }).then(
          () => null,
          (err: unknown) => qdrantError("scroll", err),
        );
      const refused = await fail("c");
      expect(refused).not.toBeInstanceOf(UnavailableError);
      expect(refused!.message).toBe("Qdrant rejected a request (scroll): 400 Wrong input: Vector dimension error");
      expect(await fail("busy")).toBeInstanceOf(UnavailableError);
      expect(await fail("limited")).toBeInstanceOf(UnavailableError);
    } finally {
      await server.close();
    }
  });

  it("ends a request past the client's timeout, and one whose connection is cut, as Qdrant unavailable", async () => {
    const server = await serve((req, res) => {
      if (req.url!.includes("cut")) res.socket!.destroy();
      else if (!req.url!.includes("slow")) json(res, 200, { result: { points: [], next_page_offset: null }, status: "ok", time: 0 });
      // "slow" has no answer: the client's timeout ends the request.
    });
    try {
      const client = createQdrantClient({ url: server.url, timeoutMs: 300 });
      const late = await client.scroll("slow", { limit: 1 }).catch((err: unknown) => err);
      expect(late).toBeInstanceOf(QdrantClientTimeoutError);
      expect(qdrantError("scroll", late)).toBeInstanceOf(UnavailableError);
      const cut = await client.scroll("cut", { limit: 1 }).catch((err: unknown) => err);
      expect(qdrantError("scroll", cut)).toBeInstanceOf(UnavailableError);
      expect((cut as NodeJS.ErrnoException).code).toBe("ECONNRESET");
      // The client goes on answering afterwards.
      expect(await client.scroll("c", { limit: 1 })).toEqual({ points: [], next_page_offset: null });
      // No server: the socket's error, without a status.
      const refused = await createQdrantClient({ url: "http://127.0.0.1:1" })
        .versionInfo()
        .catch((err: unknown) => err);
      expect(refused).toMatchObject({ code: "ECONNREFUSED" });
      expect(qdrantError("ping", refused)).toBeInstanceOf(UnavailableError);
    } finally {
      await server.close();
    }
  });
});
