/**
 * The modes test/api-load.test.ts and test/api-read.test.ts run the same expectations in, and
 * what they share: a text loaded and waited for, and the check of a problem-details answer.
 */
import { expect } from "vitest";
import { describeSkipped, QDRANT_SKIP, qdrantSource } from "@docstore/shared/testing";
import type { Mode, Service, StartOptions } from "./harness.ts";

const QDRANT_MODE = "distributed with the index on Qdrant";

/**
 * Embedded (one process) and distributed (API, two worker processes, BullMQ on Redis, an S3
 * server, the LanceDB index shared by the processes), with the catalog in a shared SQLite file
 * or in Redis, and with the index on a real Qdrant where one is given (QDRANT_BIN or
 * QDRANT_URL); without one, that mode is reported as skipped.
 */
export function apiModes(): { name: string; mode: Mode; env?: Record<string, string>; index?: StartOptions["index"] }[] {
  if (!qdrantSource()) describeSkipped(`${QDRANT_MODE} mode`, QDRANT_SKIP);
  return [
    { name: "embedded", mode: "embedded" },
    { name: "distributed", mode: "distributed" },
    { name: "distributed with the catalog in Redis", mode: "distributed", env: { CATALOG: "redis" } },
    ...(qdrantSource() ? [{ name: QDRANT_MODE, mode: "distributed" as const, index: "qdrant" as const }] : []),
  ];
}

/** Loads a text with wait=true and expects it ready; returns the answer's body. */
export async function loadText(svc: Service, collection: string, text: string, metadata: object = {}, query: Record<string, string> = {}) {
  const r = await svc.request("POST", "/load_text_to_collection", {
    query: { collection_name: collection, wait: "true", ...query },
    json: { text, metadata },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.status).toBe("ready");
  return r.body;
}

export function expectProblem(r: { status: number; headers: Headers; body: any }, status: number, detail: RegExp) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(r.body).toMatchObject({ type: "about:blank", status });
  expect(r.body.detail).toMatch(detail);
}
