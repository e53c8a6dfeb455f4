/**
 * The load and the checks the fault tests (faults.test.ts) run around each fault: clients that
 * keep loading while it happens, every answer recorded, requests guarded by a time limit, and
 * the audit every fault test ends with (ledger.ts).
 */
import { expect } from "vitest";
import http from "node:http";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { atFileEnd } from "./cleanup.ts";
import { until, type Service } from "./harness.ts";
import { auditCollection, type Audited } from "./ledger.ts";

/** Every request is answered within this, or the test fails: a guard against a hang, not a speed check. */
export const GUARD_MS = 60_000;
/** Requests made while a dependency is down are answered within this ("quickly", not a hang), or the test fails. */
export const PROMPT_MS = 15_000;
/** How long the documents of a test may take to settle after the fault, on a loaded 2-core machine. */
export const SETTLE_MS = 240_000;

export const FILLER = Array.from({ length: 400 }, (_, w) => `term${w % 157}`).join(" ");
/** Document n's text: its own marker word, and enough filler for a few chunks. */
export const textOf = (n: number) => `document ${n} carries marker${n}. ${FILLER}`;
export const idOf = (n: number) => `d${n}`;

export type Answer = { status: number; headers: Headers; body: any } | { error: string };

/** One request to `target` (the API, or an API that replaced it); a network error or the guard's end is `{ error }`. */
export async function call(
  target: { url: string; token: string },
  method: string,
  route: string,
  opts: { query?: Record<string, string | number>; json?: unknown; form?: FormData; guardMs?: number } = {},
): Promise<Answer> {
  const url = new URL(route, target.url);
  for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { authorization: `Bearer ${target.token}` };
  if (opts.json !== undefined) headers["content-type"] = "application/json";
  try {
    const res = await fetch(url, {
      method,
      headers,
      body: opts.json !== undefined ? JSON.stringify(opts.json) : opts.form,
      signal: AbortSignal.timeout(opts.guardMs ?? GUARD_MS),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body };
  } catch (err) {
    return { error: (err as Error).cause ? String((err as Error).cause) : String(err) };
  }
}

export const status = (a: Answer) => ("error" in a ? a.error : a.status);

/** A 200, or the test fails with what came instead. */
export function ok(a: Answer, what: string): any {
  expect(status(a), `${what}: ${JSON.stringify("body" in a ? a.body : a)}`).toBe(200);
  return (a as { body: unknown }).body;
}

/** A 503 with Retry-After, or the test fails with what came instead. */
export function unavailable(a: Answer, what: string): string {
  expect(status(a), `${what}: ${JSON.stringify("body" in a ? a.body : a)}`).toBe(503);
  const { headers, body } = a as { headers: Headers; body: { detail: string } };
  expect(headers.get("retry-after"), what).toMatch(/^\d+$/);
  return body.detail;
}

/**
 * What the clients of one collection were told: the documents acknowledged (2xx), the loads
 * refused with 503 and Retry-After, the documents whose load was never answered, and every
 * answer no fault excuses (a 5xx other than 503, a 4xx, a 503 without Retry-After).
 */
export class Answers {
  readonly collection: string;
  readonly acknowledged = new Set<string>();
  readonly unanswered = new Set<string>();
  refused = 0;
  readonly wrong: string[] = [];
  /** Whether a load that is never answered is expected (the API is killed), not a fault of the service. */
  unansweredExpected = false;
  #next = 0;

  constructor(collection: string) {
    this.collection = collection;
  }

  get loaded(): number {
    return this.#next;
  }

  take(n: number): number[] {
    return Array.from({ length: n }, () => this.#next++);
  }

  record(ids: string[], answer: Answer): void {
    if ("error" in answer) {
      if (this.unansweredExpected) for (const id of ids) this.unanswered.add(id);
      else this.wrong.push(`${ids[0]}…: no answer (${answer.error})`);
    } else if (answer.status === 200 || answer.status === 202) {
      for (const id of ids) this.acknowledged.add(id);
    } else if (answer.status === 503 && /^\d+$/.test(answer.headers.get("retry-after") ?? "")) {
      this.refused++;
    } else {
      this.wrong.push(`${ids[0]}…: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
  }
}

/** Loads documents `ns` in one bulk request. */
export async function loadBulk(target: { url: string; token: string }, answers: Answers, ns: number[], guardMs?: number): Promise<Answer> {
  const documents = ns.map((n) => ({ doc_id: idOf(n), text: textOf(n), metadata: { n } }));
  const answer = await call(target, "POST", "/load_texts_to_collection", {
    query: { collection_name: answers.collection },
    json: { documents },
    guardMs,
  });
  answers.record(ns.map(idOf), answer);
  return answer;
}

/** Loads document n alone. */
export async function loadOne(target: { url: string; token: string }, answers: Answers, n: number, guardMs?: number): Promise<Answer> {
  const answer = await call(target, "POST", "/load_text_to_collection", {
    query: { collection_name: answers.collection, doc_id: idOf(n) },
    json: { text: textOf(n), metadata: { n } },
    guardMs,
  });
  answers.record([idOf(n)], answer);
  return answer;
}

/**
 * Clients that each send one request after another (a short wait after a 503) until stopped,
 * or until `send` has nothing more to send (undefined).
 */
export function keepSending(clients: number, send: (client: number, turn: number) => Promise<Answer> | undefined) {
  let stopped = false;
  const client = async (c: number) => {
    for (let turn = 0; !stopped; turn++) {
      const sending = send(c, turn);
      if (!sending) break;
      const answer = await sending;
      await new Promise((r) => setTimeout(r, status(answer) === 503 ? 250 : 20));
    }
  };
  const running = Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  return {
    /** No client starts another request; those in flight go on. */
    halt() {
      stopped = true;
    },
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/** Clients that load texts, in bulk and singly in turn, until stopped or until `cap` documents were sent. */
export function keepLoading(
  target: () => { url: string; token: string },
  answers: Answers,
  opts: { clients?: number; bulk?: number; cap: number },
) {
  return keepSending(opts.clients ?? 3, (c, turn) => {
    if (answers.loaded >= opts.cap) return undefined;
    return (turn + c) % 2 === 0
      ? loadBulk(target(), answers, answers.take(opts.bulk ?? 10))
      : loadOne(target(), answers, answers.take(1)[0]!);
  });
}

/** Filler for large files: about 9 MB, over the S3 store's multipart threshold (8 MiB). */
export const LARGE_BYTES = 9_000_000;
let large: string | undefined;
const largeFiller = () => (large ??= `${FILLER} `.repeat(Math.ceil(LARGE_BYTES / (FILLER.length + 1))).slice(0, LARGE_BYTES));

/** Uploads document n as a multipart file, padded to about `bytes` when that is more than its text. */
export async function upload(target: { url: string; token: string }, answers: Answers, n: number, bytes = 0): Promise<Answer> {
  const text = bytes > 0 ? `${textOf(n)} ${largeFiller().slice(0, bytes)}` : textOf(n);
  const form = new FormData();
  form.append("metadata", JSON.stringify({ n }));
  form.append("file", new Blob([text], { type: "text/plain" }), `${idOf(n)}.txt`);
  const answer = await call(target, "POST", "/load_document_to_collection", {
    query: { collection_name: answers.collection, doc_id: idOf(n) },
    form,
  });
  answers.record([idOf(n)], answer);
  return answer;
}

/**
 * Uploads document n as a large file whose body arrives slowly (64 KB every 100 ms after the
 * first megabyte), so that it is still arriving when the test kills the API.
 */
export function trickle(target: { url: string; token: string }, answers: Answers, n: number) {
  const boundary = `faults-${n}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${idOf(n)}.txt"\r\nContent-Type: text/plain\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body = Buffer.concat([head, Buffer.from(`${textOf(n)} ${largeFiller()}`), tail]);
  const url = new URL(`/load_document_to_collection?collection_name=${answers.collection}&doc_id=${idOf(n)}`, target.url);
  const progress = { sent: 0 };
  const answered = new Promise<void>((resolve) => {
    const req = http.request(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${target.token}`,
        "content-type": `multipart/form-data; boundary=${boundary}`,
        "content-length": String(body.length),
      },
    });
    const settle = (answer: Answer) => {
      answers.record([idOf(n)], answer);
      clearInterval(timer);
      resolve();
    };
    req.on("response", (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      const headers = new Headers();
      for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") headers.set(k, v);
      res.on("end", () => settle({ status: res.statusCode ?? 0, headers, body: text }));
    });
    req.on("error", (err) => settle({ error: String(err) }));
    const send = (bytes: number) => {
      const part = body.subarray(progress.sent, progress.sent + bytes);
      progress.sent += part.length;
      if (progress.sent >= body.length) req.end(part);
      else req.write(part);
    };
    send(1024 * 1024);
    const timer = setInterval(() => progress.sent < body.length && send(64 * 1024), 100);
  });
  return { progress, answered };
}

export async function collectionStats(target: { url: string; token: string }, collection: string) {
  const body = ok(await call(target, "GET", "/get_list_of_collection"), "list of collections");
  return (body.collections as { name: string; documents: number; ready: number; pending: number; failed: number }[]).find(
    (c) => c.name === collection,
  );
}

/** Requests that need neither Redis nor S3 nor the embedder: each must answer 200 (a document's status, a search, the lists). */
export async function readsWork(target: { url: string; token: string }, answers: Answers, readyId: string) {
  const n = readyId.slice(1);
  const c = answers.collection;
  const guardMs = PROMPT_MS;
  const found = ok(
    await call(target, "GET", "/get_relevant_documents", { query: { query: `marker${n}`, collection_names: c, k: 3 }, guardMs }),
    "search",
  );
  expect(found.results[0]?.doc_id).toBe(readyId);
  ok(await call(target, "GET", "/get_document_status", { query: { collection_name: c, id_value: readyId }, guardMs }), "status");
  ok(await call(target, "GET", "/get_list_of_documents_names", { query: { collection_name: c, limit: 10 }, guardMs }), "list of documents");
  ok(await call(target, "GET", "/get_list_of_collection", { guardMs }), "list of collections");
  ok(
    await call(target, "GET", "/get_content_by_tag", { query: { collection_name: c, tag_info: `n=${n}`, limit: 5 }, guardMs }),
    "documents by tag",
  );
  return found;
}

/** A document of the collection that is ready now. */
export async function someReady(target: { url: string; token: string }, collection: string): Promise<string> {
  return until(async () => {
    const body = ok(
      await call(target, "GET", "/get_list_of_documents_names", { query: { collection_name: collection, limit: 1000 } }),
      "list",
    );
    return (body.documents as { doc_id: string; status: string }[]).find((d) => d.status === "ready")?.doc_id;
  }, SETTLE_MS);
}

/**
 * The start of an outage test: 300 documents loaded in bulk, clients loading more without
 * pause, and some of them pending while one is ready (what the test checks reads stay possible with).
 */
export async function underLoad(svc: Service, name: string) {
  const answers = new Answers(name);
  const c = answers.collection;
  for (let b = 0; b < 6; b++) expect(status(await loadBulk(svc, answers, answers.take(50)))).toBe(202);
  const loaders = keepLoading(() => svc, answers, { clients: 3, bulk: 10, cap: 600 });
  const readyId = await someReady(svc, c);
  expect((await collectionStats(svc, c))!.pending).toBeGreaterThan(0);
  return { answers, c, loaders, readyId };
}

export interface Figures extends Audited {
  refused: number;
  unanswered: number;
}

/** Waits until nothing of the collection is pending (a guard against a hang), then runs the audit every fault test ends with (ledger.ts). */
export async function audit(svc: Service, answers: Answers): Promise<Figures> {
  expect(answers.wrong, "answers no fault excuses").toEqual([]);
  const c = answers.collection;
  const settled = async () => {
    await new Promise((r) => setTimeout(r, 200));
    return (await collectionStats(svc, c))?.pending === 0;
  };
  await until(settled, SETTLE_MS).catch(async () => {
    throw new Error(`documents still pending: ${JSON.stringify(await collectionStats(svc, c))}`);
  });
  const audited = await auditCollection(svc, c, {
    acknowledged: answers.acknowledged,
    unanswered: answers.unanswered,
    markerOf: (id) => `marker${id.slice(1)}`,
  });
  return { ...audited, refused: answers.refused, unanswered: answers.unanswered.size };
}

/**
 * The end of an outage test, once the service it took away is back: loads are accepted again,
 * the clients load 40 more documents than the collection had during the outage (or reach their
 * cap), then stop; the audit, with none of the documents failed.
 */
export async function recovered(
  svc: Service,
  answers: Answers,
  loaders: { stop(): Promise<unknown> },
  documentsDuring: number,
): Promise<Figures> {
  await until(async () => status(await loadOne(svc, answers, answers.take(1)[0]!)) === 202, 60_000);
  await until(
    async () => answers.loaded >= 600 || (await collectionStats(svc, answers.collection))!.documents >= documentsDuring + 40,
    60_000,
  );
  await loaders.stop();
  const figures = await audit(svc, answers);
  expect(figures.failed).toBe(0);
  return figures;
}

export function report(name: string, figures: Figures & Record<string, unknown>) {
  console.log(`[faults] ${name}: ${JSON.stringify(figures)}`);
}

/** A BullMQ view of the service's ingestion queue, closed when the test file ends. */
export function ingestQueue(svc: Service): Queue {
  const connection = new Redis(svc.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const queue = new Queue("ingest", { connection, prefix: svc.env.REDIS_PREFIX });
  atFileEnd(async () => {
    await queue.close();
    connection.disconnect();
  });
  return queue;
}

/** The worker process a job is active in, if it is alive: the worker's BullMQ name ends in its pid. */
export function holder(svc: Service, processedBy: string | undefined) {
  const pid = Number(processedBy?.split(":").pop());
  return svc.workers.find((w) => w.pid === pid && w.exitCode === null && w.signalCode === null);
}
