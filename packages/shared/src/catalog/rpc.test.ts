import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CATALOG_SCHEMA, openDatabase } from "../sqlite/db.ts";
import { SqliteCatalog } from "./sqlite.ts";
import type { Catalog } from "../ports.ts";
import { isCatalogCalls, remoteWritesCatalog, serveCatalogWrites } from "./rpc.ts";
import { newDocument } from "../../test-support/catalog-contract.ts";

describe("catalog writes sent to the thread that owns them", () => {
  let dir: string;
  let owner: SqliteCatalog;
  let remote: Catalog;
  let ports: MessagePort[];
  let messages: number;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "docstore-rpc-"));
    const file = path.join(dir, "catalog.sqlite");
    owner = new SqliteCatalog(openDatabase(file, CATALOG_SCHEMA));
    const { port1: apiSide, port2: workerSide } = new MessageChannel();
    ports = [apiSide, workerSide];
    messages = 0;
    const serve = serveCatalogWrites(apiSide, owner);
    apiSide.on("message", (m: unknown) => {
      if (!isCatalogCalls(m)) return;
      messages++;
      serve(m);
    });
    remote = remoteWritesCatalog(workerSide, new SqliteCatalog(openDatabase(file, CATALOG_SCHEMA)));
  });

  afterEach(async () => {
    for (const p of ports) p.close();
    await remote.close();
    await owner.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("sends the writes of one turn as one message, and answers each call", async () => {
    const records = await Promise.all(Array.from({ length: 300 }, (_, i) => owner.accept(newDocument("c", `d${i}`))));
    messages = 0;
    const ready = await Promise.all(records.map(({ record: r }, i) => remote.markReady(r.collection, r.docId, r.version, i)));
    expect(ready).toEqual(records.map(() => true));
    expect(messages).toBe(1);
    // A stale version is answered false, beside calls that succeed, in the same message.
    const mixed = await Promise.all([remote.markFailed("c", "d0", 99, "stale"), remote.markFailed("c", "d1", 1, "bad")]);
    expect(mixed).toEqual([false, true]);
    expect(messages).toBe(2);
    expect((await owner.get("c", "d299"))?.chunks).toBe(299);
    expect((await owner.get("c", "d1"))?.status).toBe("failed");
  });

  it("fails every call of a turn whose arguments cannot be sent, and goes on working", async () => {
    const { record } = await owner.accept(newDocument("c", "d"));
    const calls = [remote.markReady("c", "d", record.version, 1), remote.markFailed("c", "d", record.version, (() => "x") as unknown as string)];
    for (const outcome of await Promise.allSettled(calls)) expect(outcome.status).toBe("rejected");
    expect(await remote.markReady("c", "d", record.version, 1)).toBe(true);
  });

  it("rejects the call a write throws on, and only it", async () => {
    const [{ record: a }, { record: b }] = await Promise.all([owner.accept(newDocument("c", "a")), owner.accept(newDocument("c", "b"))]);
    const outcomes = await Promise.allSettled([
      remote.markReady("c", "a", a.version, { chunks: 1 } as unknown as number), // SQLite cannot bind an object
      remote.markReady("c", "b", b.version, 2),
    ]);
    expect(outcomes[0]!.status).toBe("rejected");
    expect((outcomes[0] as PromiseRejectedResult).reason.message).toMatch(/bind/i);
    expect(outcomes[1]).toEqual({ status: "fulfilled", value: true });
    expect(messages).toBe(1);
  });
});
