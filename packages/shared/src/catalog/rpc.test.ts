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
import { sqliteBusyError } from "../../test-support/sqlite-busy.ts";
import { isSqliteBusy } from "../sqlite/busy.ts";
import Database from "better-sqlite3";
import {
  BadRequestError,
  ConfigError,
  DimensionMismatchError,
  EmbeddingRejectedError,
  ExtractionError,
  FilterSyntaxError,
  ForbiddenError,
  NotFoundError,
  RateLimitedError,
  StorageError,
  TooLargeError,
  UnauthorizedError,
  UnavailableError,
  UnsupportedMediaTypeError,
} from "../errors.ts";

/** A catalog whose deleteCollection throws what it is given: the errors a write can raise, of every kind. */
class ThrowingCatalog extends SqliteCatalog {
  next: unknown = null;
  override async deleteCollection(): Promise<number> {
    throw this.next;
  }
}

/** `owner` serving the writes of a worker-side catalog over a new channel. */
function connect(owner: Catalog, local: Catalog, ports: MessagePort[]): Catalog {
  const { port1: apiSide, port2: workerSide } = new MessageChannel();
  ports.push(apiSide, workerSide);
  const serve = serveCatalogWrites(apiSide, owner);
  apiSide.on("message", (m: unknown) => isCatalogCalls(m) && serve(m));
  return remoteWritesCatalog(workerSide, local);
}

/** What the worker side gets for `err` thrown by the owner's write. */
async function thrownThrough(remote: Catalog): Promise<Error> {
  const outcome = (await Promise.allSettled([remote.deleteCollection("c")]))[0]!;
  expect(outcome.status).toBe("rejected");
  return (outcome as PromiseRejectedResult).reason as Error;
}

/** The same class, name, message and own fields, and the same for the causes. */
function expectSameError(back: unknown, sent: unknown): void {
  if (!(sent instanceof Error)) {
    expect(back).toMatchObject({ message: String(sent) });
    return;
  }
  expect(back).toBeInstanceOf(Error);
  const b = back as Error;
  expect(Object.getPrototypeOf(b)).toBe(Object.getPrototypeOf(sent));
  expect(b.name).toBe(sent.name);
  expect(b.message).toBe(sent.message);
  expect({ ...b }).toEqual({ ...sent });
  if (sent.cause !== undefined) expectSameError(b.cause, sent.cause);
}

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

  it("runs a large message a slice a turn, in the order sent, the owner's loop turning between slices", async () => {
    const { port1: apiSide, port2: workerSide } = new MessageChannel();
    ports.push(apiSide, workerSide);
    let replies = 0;
    const counted = {
      postMessage: (m: unknown) => {
        replies++;
        apiSide.postMessage(m);
      },
    };
    const serve = serveCatalogWrites(counted, owner, 100);
    // Turns of the owner's loop (its I/O, an HTTP request's, runs in each) while the calls run.
    let turns = 0;
    const turning = setInterval(() => turns++, 0);
    const answeredAt: number[] = [];
    apiSide.on("message", (m: unknown) => {
      if (!isCatalogCalls(m)) return;
      messages++;
      serve(m);
    });
    const sliced = remoteWritesCatalog(workerSide, owner);
    const records = await Promise.all(Array.from({ length: 350 }, (_, i) => owner.accept(newDocument("c", `d${i}`))));
    messages = 0;
    const { record: last } = records.at(-1)!;
    const calls = [
      sliced.markFailed(last.collection, last.docId, last.version, "first"),
      ...records.map(async ({ record: r }, i) => {
        const ready = await sliced.markReady(r.collection, r.docId, r.version, i);
        answeredAt.push(turns);
        return ready;
      }),
    ];
    const answers = await Promise.all(calls);
    clearInterval(turning);
    expect(answers.every((a) => a === true)).toBe(true);
    expect(messages).toBe(1);
    expect(replies).toBe(4); // 351 calls, 100 at a time
    // The last markReady, in the fourth slice, came after the markFailed of the first.
    expect(await owner.get("c", "d349")).toMatchObject({ status: "ready", chunks: 349 });
    // The first slice was answered turns of the loop before the last.
    expect(answeredAt[0]!).toBeLessThan(answeredAt.at(-1)!);
  });

  it("fails the calls whose answer cannot be sent, drops one with nobody to answer, and serves the next", async () => {
    const posted: { replies: { rpc: number; result?: unknown; error?: unknown }[] }[] = [];
    let failing = 0;
    const thread = {
      postMessage: (m: unknown) => {
        if (failing > 0) {
          failing--;
          throw new Error("the thread is gone");
        }
        posted.push(structuredClone(m) as (typeof posted)[number]);
      },
    };
    const serve = serveCatalogWrites(thread, owner, 1);
    const call = (rpc: number) => ({ rpc, method: "markFailed" as const, args: ["c", `none${rpc}`, 1, "e"] });
    const settled = async () => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    failing = 1; // the reply fails, the error reply goes
    serve({ calls: [call(1)] });
    await settled();
    expect(posted.map((m) => m.replies.map((r) => [r.rpc, r.error === undefined]))).toEqual([[[1, false]]]);
    failing = 2; // neither can be sent: dropped, and the slices after it still run
    serve({ calls: [call(2), call(3)] });
    await settled();
    expect(posted.slice(1).map((m) => m.replies.map((r) => [r.rpc, r.result]))).toEqual([[[3, false]]]);
  });

  it("fails every call of a turn whose arguments cannot be sent, and goes on working", async () => {
    const { record } = await owner.accept(newDocument("c", "d"));
    const calls = [
      remote.markReady("c", "d", record.version, 1),
      remote.markFailed("c", "d", record.version, (() => "x") as unknown as string),
    ];
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

  it("rejects a call with the error the write threw: the same class, with the same fields", async () => {
    const thrower = new ThrowingCatalog(openDatabase(path.join(dir, "catalog.sqlite"), CATALOG_SCHEMA));
    const through = connect(thrower, owner, ports);
    const busy = sqliteBusyError();
    const sent: unknown[] = [
      new BadRequestError("invalid k", { field: "k" }),
      new FilterSyntaxError("expected a value", 7),
      new UnauthorizedError("missing bearer token"),
      new ForbiddenError("not in scope"),
      new RateLimitedError("too many requests", 12),
      new NotFoundError("no collection c"),
      new UnsupportedMediaTypeError("unsupported file type", "application/zip"),
      new TooLargeError("over MAX_UPLOAD_BYTES"),
      new UnavailableError("redis is down", new Error("ECONNREFUSED")),
      new StorageError("full", "no space left", Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" })),
      new EmbeddingRejectedError("bad key", 401, new Error("401")),
      new ConfigError("bad DATA_DIR"),
      new ExtractionError("encrypted PDF"),
      DimensionMismatchError.fromModel("m", 3, 4),
      new TypeError("a bug"),
      "a string thrown",
    ];
    try {
      for (const err of sent) {
        thrower.next = err;
        expectSameError(await thrownThrough(through), err);
      }
      // A library's class (better-sqlite3's) is rebuilt as an Error of its name, with its code.
      thrower.next = busy;
      const back = await thrownThrough(through);
      expect(back).toMatchObject({ name: "SqliteError", message: busy.message, code: "SQLITE_BUSY" });
      expect(isSqliteBusy(back)).toBe(true);
    } finally {
      await thrower.close();
    }
  });

  it("rejects with the StorageError a read-only catalog raises, not a plain Error", async () => {
    await owner.accept(newDocument("c", "d"));
    const readOnly = new SqliteCatalog(new Database(path.join(dir, "catalog.sqlite"), { readonly: true }));
    const through = connect(readOnly, owner, ports);
    try {
      const err = await thrownThrough(through);
      expect(err).toBeInstanceOf(StorageError);
      expect(err).toMatchObject({ kind: "unavailable", reason: "read-only" });
      expect((err.cause as { code?: string }).code).toMatch(/^SQLITE_READONLY/);
    } finally {
      await readOnly.close();
    }
  });
});
