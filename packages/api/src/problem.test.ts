import type { AddressInfo } from "node:net";
import express from "express";
import { describe, expect, it } from "vitest";
import { createLogger, HeaderFieldsTooLargeError, MethodNotAllowedError } from "@docstore/shared";
import { sqliteBusyError } from "@docstore/shared/testing";
import { problemHandler, RETRY_AFTER_SECONDS } from "./problem.ts";

describe("problem details", () => {
  it("answer a database busy past its timeout with a 503 and Retry-After, not a 500", async () => {
    const err = sqliteBusyError();
    expect((err as { code?: string }).code).toBe("SQLITE_BUSY");
    const app = express();
    app.post("/load", () => {
      throw err;
    });
    app.use(problemHandler(createLogger("silent")));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/load`, { method: "POST" });
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe(String(RETRY_AFTER_SECONDS));
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      const body = (await res.json()) as { status: number; detail: string };
      expect(body).toMatchObject({ status: 503, title: "Service Unavailable" });
      expect(body.detail).toMatch(/catalog is busy \(SQLITE_BUSY/);
    } finally {
      server.close();
    }
  });

  it("answer a 405 and a 431 from their error classes, with the standard titles and nothing more", async () => {
    const app = express();
    app.get("/405", () => {
      throw new MethodNotAllowedError("method DELETE is not served at /x; accepted: GET");
    });
    app.get("/431", () => {
      throw new HeaderFieldsTooLargeError("headers: received 101 header fields; accepted: at most 100 (a fixed limit)");
    });
    app.use(problemHandler(createLogger("silent")));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    try {
      for (const [status, title, detail] of [
        [405, "Method Not Allowed", "method DELETE is not served at /x; accepted: GET"],
        [431, "Request Header Fields Too Large", "headers: received 101 header fields; accepted: at most 100 (a fixed limit)"],
      ] as const) {
        const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/${status}`);
        expect(res.status).toBe(status);
        expect(res.headers.get("retry-after")).toBeNull();
        const body = (await res.json()) as Record<string, unknown>;
        expect(Object.keys(body).sort()).toEqual(["detail", "instance", "status", "title", "type"]);
        expect(body).toMatchObject({ type: "about:blank", status, title, detail, instance: `/${status}` });
      }
    } finally {
      server.close();
    }
  });
});
