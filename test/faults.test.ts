/**
 * Faults in the distributed mode (API process, worker processes, BullMQ on Redis, S3, the
 * SQLite catalog and the LanceDB index in the shared DATA_DIR): workers killed mid-batch, Redis
 * and S3 stopped and started under load, an embedding server that refuses and then stalls, the
 * API killed while uploads arrive. Clients keep loading while each happens, and each test ends
 * with the audit every fault test ends with (ledger.ts): every acknowledged document `ready` or
 * `failed` with a reason, none lost, the index holding each ready one exactly once with the
 * catalog's chunk count, and a search finding each by its marker. While a dependency is down,
 * what needs it answers 503 with Retry-After (each request guarded by a time limit, so a hang
 * fails the test) and what does not keeps answering 200.
 */
import { describe, expect, it } from "vitest";
import { once } from "node:events";
import http from "node:http";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { freePort, RedisServer, startOpenAIServer, startS3Server, type OpenAIServer } from "@docstore/shared/testing";
import { atFileEnd } from "./cleanup.ts";
import { startService, tempDataDir, until, type Service } from "./harness.ts";
import { auditCollection, type Audited } from "./ledger.ts";

/** Every request is answered within this, or the test fails: a guard against a hang, not a speed check. */
const GUARD_MS = 60_000;
/** Requests made while a dependency is down are answered within this ("quickly", not a hang), or the test fails. */
const PROMPT_MS = 15_000;
/** How long the documents of a test may take to settle after the fault, on a loaded 2-core machine. */
const SETTLE_MS = 240_000;

const FILLER = Array.from({ length: 400 }, (_, w) => `term${w % 157}`).join(" ");
/** Document n's text: its own marker word, and enough filler for a few chunks. */
const textOf = (n: number) => `document ${n} carries marker${n}. ${FILLER}`;
const idOf = (n: number) => `d${n}`;

type Answer = { status: number; headers: Headers; body: any } | { error: string };

/** One request to `target` (the API, or an API that replaced it); a network error or the guard's end is `{ error }`. */
async function call(
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

const status = (a: Answer) => ("error" in a ? a.error : a.status);

/** A 200, or the test fails with what came instead. */
function ok(a: Answer, what: string): any {
  expect(status(a), `${what}: ${JSON.stringify("body" in a ? a.body : a)}`).toBe(200);
  return (a as { body: unknown }).body;
}

/** A 503 with Retry-After, or the test fails with what came instead. */
function unavailable(a: Answer, what: string): string {
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
class Answers {
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
async function loadBulk(target: { url: string; token: string }, answers: Answers, ns: number[], guardMs?: number): Promise<Answer> {
  const documents = ns.map((n) => ({ doc_id: idOf(n), text: textOf(n), metadata: { n } }));
  const answer = await call(target, "POST", "/load_texts_to_collection", { query: { collection_name: answers.collection }, json: { documents }, guardMs });
  answers.record(ns.map(idOf), answer);
  return answer;
}

/** Loads document n alone. */
async function loadOne(target: { url: string; token: string }, answers: Answers, n: number, guardMs?: number): Promise<Answer> {
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
function keepSending(clients: number, send: (client: number, turn: number) => Promise<Answer> | undefined) {
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
function keepLoading(target: () => { url: string; token: string }, answers: Answers, opts: { clients?: number; bulk?: number; cap: number }) {
  return keepSending(opts.clients ?? 3, (c, turn) => {
    if (answers.loaded >= opts.cap) return undefined;
    return (turn + c) % 2 === 0 ? loadBulk(target(), answers, answers.take(opts.bulk ?? 10)) : loadOne(target(), answers, answers.take(1)[0]!);
  });
}

/** Filler for large files: about 9 MB, over the S3 store's multipart threshold (8 MiB). */
const LARGE_BYTES = 9_000_000;
let large: string | undefined;
const largeFiller = () => (large ??= `${FILLER} `.repeat(Math.ceil(LARGE_BYTES / (FILLER.length + 1))).slice(0, LARGE_BYTES));

/** Uploads document n as a multipart file, padded to about `bytes` when that is more than its text. */
async function upload(target: { url: string; token: string }, answers: Answers, n: number, bytes = 0): Promise<Answer> {
  const text = bytes > 0 ? `${textOf(n)} ${largeFiller().slice(0, bytes)}` : textOf(n);
  const form = new FormData();
  form.append("metadata", JSON.stringify({ n }));
  form.append("file", new Blob([text], { type: "text/plain" }), `${idOf(n)}.txt`);
  const answer = await call(target, "POST", "/load_document_to_collection", { query: { collection_name: answers.collection, doc_id: idOf(n) }, form });
  answers.record([idOf(n)], answer);
  return answer;
}

/**
 * Uploads document n as a large file whose body arrives slowly (64 KB every 100 ms after the
 * first megabyte), so that it is still arriving when the test kills the API.
 */
function trickle(target: { url: string; token: string }, answers: Answers, n: number) {
  const boundary = `faults-${n}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${idOf(n)}.txt"\r\nContent-Type: text/plain\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body = Buffer.concat([head, Buffer.from(`${textOf(n)} ${largeFiller()}`), tail]);
  const url = new URL(`/load_document_to_collection?collection_name=${answers.collection}&doc_id=${idOf(n)}`, target.url);
  const progress = { sent: 0 };
  const answered = new Promise<void>((resolve) => {
    const req = http.request(url, {
      method: "POST",
      headers: { authorization: `Bearer ${target.token}`, "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": String(body.length) },
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

async function collectionStats(target: { url: string; token: string }, collection: string) {
  const body = ok(await call(target, "GET", "/get_list_of_collection"), "list of collections");
  return (body.collections as { name: string; documents: number; ready: number; pending: number; failed: number }[]).find((c) => c.name === collection);
}

/** Requests that need neither Redis nor S3 nor the embedder: each must answer 200 (a document's status, a search, the lists). */
async function readsWork(target: { url: string; token: string }, answers: Answers, readyId: string) {
  const n = readyId.slice(1);
  const c = answers.collection;
  const guardMs = PROMPT_MS;
  const found = ok(await call(target, "GET", "/get_relevant_documents", { query: { query: `marker${n}`, collection_names: c, k: 3 }, guardMs }), "search");
  expect(found.results[0]?.doc_id).toBe(readyId);
  ok(await call(target, "GET", "/get_document_status", { query: { collection_name: c, id_value: readyId }, guardMs }), "status");
  ok(await call(target, "GET", "/get_list_of_documents_names", { query: { collection_name: c, limit: 10 }, guardMs }), "list of documents");
  ok(await call(target, "GET", "/get_list_of_collection", { guardMs }), "list of collections");
  ok(await call(target, "GET", "/get_content_by_tag", { query: { collection_name: c, tag_info: `n=${n}`, limit: 5 }, guardMs }), "documents by tag");
  return found;
}

/** A document of the collection that is ready now. */
async function someReady(target: { url: string; token: string }, collection: string): Promise<string> {
  return until(async () => {
    const body = ok(await call(target, "GET", "/get_list_of_documents_names", { query: { collection_name: collection, limit: 1000 } }), "list");
    return (body.documents as { doc_id: string; status: string }[]).find((d) => d.status === "ready")?.doc_id;
  }, SETTLE_MS);
}

/**
 * The start of an outage test: 300 documents loaded in bulk, clients loading more without
 * pause, and some of them pending while one is ready (what the test checks reads stay possible with).
 */
async function underLoad(svc: Service, name: string) {
  const answers = new Answers(name);
  const c = answers.collection;
  for (let b = 0; b < 6; b++) expect(status(await loadBulk(svc, answers, answers.take(50)))).toBe(202);
  const loaders = keepLoading(() => svc, answers, { clients: 3, bulk: 10, cap: 600 });
  const readyId = await someReady(svc, c);
  expect((await collectionStats(svc, c))!.pending).toBeGreaterThan(0);
  return { answers, c, loaders, readyId };
}

interface Figures extends Audited {
  refused: number;
  unanswered: number;
}

/** Waits until nothing of the collection is pending (a guard against a hang), then runs the audit every fault test ends with (ledger.ts). */
async function audit(svc: Service, answers: Answers): Promise<Figures> {
  expect(answers.wrong, "answers no fault excuses").toEqual([]);
  const c = answers.collection;
  const settled = async () => {
    await new Promise((r) => setTimeout(r, 200));
    return (await collectionStats(svc, c))?.pending === 0;
  };
  await until(settled, SETTLE_MS).catch(async () => {
    throw new Error(`documents still pending: ${JSON.stringify(await collectionStats(svc, c))}`);
  });
  const audited = await auditCollection(svc, c, { acknowledged: answers.acknowledged, unanswered: answers.unanswered, markerOf: (id) => `marker${id.slice(1)}` });
  return { ...audited, refused: answers.refused, unanswered: answers.unanswered.size };
}

/**
 * The end of an outage test, once the service it took away is back: loads are accepted again,
 * the clients load 40 more documents than the collection had during the outage (or reach their
 * cap), then stop; the audit, with none of the documents failed.
 */
async function recovered(svc: Service, answers: Answers, loaders: { stop(): Promise<unknown> }, documentsDuring: number): Promise<Figures> {
  await until(async () => status(await loadOne(svc, answers, answers.take(1)[0]!)) === 202, 60_000);
  await until(async () => answers.loaded >= 600 || (await collectionStats(svc, answers.collection))!.documents >= documentsDuring + 40, 60_000);
  await loaders.stop();
  const figures = await audit(svc, answers);
  expect(figures.failed).toBe(0);
  return figures;
}

function report(name: string, figures: Figures & Record<string, unknown>) {
  console.log(`[faults] ${name}: ${JSON.stringify(figures)}`);
}

/** A BullMQ view of the service's ingestion queue, closed when the test file ends. */
function ingestQueue(svc: Service): Queue {
  const connection = new Redis(svc.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const queue = new Queue("ingest", { connection, prefix: svc.env.REDIS_PREFIX });
  atFileEnd(async () => {
    await queue.close();
    connection.disconnect();
  });
  return queue;
}

/** The worker process a job is active in, if it is alive: the worker's BullMQ name ends in its pid. */
function holder(svc: Service, processedBy: string | undefined) {
  const pid = Number(processedBy?.split(":").pop());
  return svc.workers.find((w) => w.pid === pid && w.exitCode === null && w.signalCode === null);
}

describe("faults, distributed mode", () => {
  it("a worker killed with SIGKILL mid-batch four times in a row, each time holding the same document", async () => {
    const svc = await startService({ mode: "distributed", workers: 2 });
    const answers = new Answers("kills");
    const queue = ingestQueue(svc);
    for (let b = 0; b < 2; b++) expect(status(await loadBulk(svc, answers, answers.take(50)))).toBe(202);
    // The document every kill interrupts, queued behind those: long enough that a worker is seen holding it.
    const big = answers.take(1)[0]!;
    const bigText = `${textOf(big)} ${Array.from({ length: 120_000 }, (_, w) => `bulk${w % 997}`).join(" ")}`;
    const first = await call(svc, "POST", "/load_text_to_collection", { query: { collection_name: answers.collection, doc_id: idOf(big) }, json: { text: bigText } });
    answers.record([idOf(big)], first);
    const target = (first as { body: { job_id: string } }).body.job_id;
    const loaders = keepLoading(() => svc, answers, { clients: 2, bulk: 20, cap: 300 });

    /** Each kill: the job it was aimed at, and how many jobs the killed worker held in all. */
    const kills: { job: string; held: number }[] = [];
    // Replacements start while the watch goes on: a worker takes seconds to start, and meanwhile
    // the surviving one may take the stalled document back and finish it unseen.
    const replacements: Promise<unknown>[] = [];
    for (let round = 1; round <= 4; round++) {
      // A worker in the middle of a batch: the one holding the big document's job, or any busy one once that job is settled.
      // The big document's job is seen active twice in the same activation first: a worker that
      // runs a job alone hands back the jobs it takes meanwhile, at once, and they count no stall.
      let seen = "";
      const { proc, job } = await until(async () => {
        const settled = ["completed", "failed"].includes(await queue.getJobState(target));
        for (const j of settled ? await queue.getActive() : [await queue.getJob(target)]) {
          if (!j) continue;
          // Seen active twice in one activation: a job deferred (delayed) keeps its activation.
          // getActive() lists only active jobs; the target alone needs its state read.
          const active = settled || (await j.getState()) === "active";
          const activation = active ? `${j.processedBy}@${j.processedOn}` : "";
          const again = activation !== "" && seen === activation;
          seen = activation;
          const held = settled || again;
          const proc = held ? holder(svc, j.processedBy) : undefined;
          if (proc) return { proc, job: j };
        }
        return undefined;
      }, 120_000).catch(async (err: unknown) => {
        // What the queue held when no worker was seen holding a job: the next failure says why.
        const job = await queue.getJob(target);
        const state = { round, kills, target: { state: await queue.getJobState(target), stalled: job?.stalledCounter, by: job?.processedBy, failed: job?.failedReason }, active: (await queue.getActive()).length };
        throw new Error(`no worker seen holding a job: ${JSON.stringify(state)}`, { cause: err });
      });
      proc.kill("SIGKILL");
      await once(proc, "exit");
      const held = (await queue.getActive()).filter((j) => j.processedBy === job.processedBy).length;
      kills.push({ job: job.id!, held });
      const replacement = svc.startWorker();
      replacement.catch(() => {}); // awaited below, after the rounds
      replacements.push(replacement);
    }
    await Promise.all(replacements);
    await loaders.stop();
    expect(kills.map((k) => k.job), JSON.stringify(kills)).toEqual([target, target, target, target]);

    const figures = await audit(svc, answers);
    // The document that took its worker down each time is given up on, with the reason; no other is.
    const bigStatus = ok(await call(svc, "GET", "/get_document_status", { query: { collection_name: answers.collection, id_value: idOf(big) } }), "status");
    expect(bigStatus).toMatchObject({ status: "failed", error: expect.stringMatching(/worker.*stopped/) });
    expect(figures.failed).toBe(1);
    report("worker SIGKILL", { ...figures, kills: kills.length, jobsHeldByKilledWorkers: kills.map((k) => k.held) });
    await svc.stop();
  }, 600_000);

  it("Redis stopped while a load is being indexed and clients keep loading, then started again with its data", async () => {
    // A Redis of the test's own that keeps every write it answered, killed and started again on the same port and folder.
    const redis = new RedisServer(await freePort(), { dataDir: tempDataDir() });
    await redis.start();
    atFileEnd(() => redis.stop());
    const svc = await startService({ mode: "distributed", workers: 2, env: { REDIS_URL: redis.url, WORKER_CONCURRENCY: "16" } });
    const { answers, c, loaders, readyId } = await underLoad(svc, "redis");

    await redis.stop();
    const stopped = Date.now();
    const refusedBefore = answers.refused;
    // Loads need the queue: 503 with Retry-After, and nothing of them is kept.
    const single = answers.take(1)[0]!;
    expect(unavailable(await loadOne(svc, answers, single, PROMPT_MS), "a load while Redis is down")).toMatch(/queue unavailable/);
    expect(unavailable(await loadBulk(svc, answers, answers.take(5), PROMPT_MS), "a bulk load while Redis is down")).toMatch(/queue unavailable/);
    expect(status(await call(svc, "GET", "/get_document_status", { query: { collection_name: c, id_value: idOf(single) } }))).toBe(404);
    expect(status(await call(svc, "GET", "/readyz", { guardMs: PROMPT_MS }))).toBe(503);
    // Searches, statuses and lists need only the catalog and the index.
    await readsWork(svc, answers, readyId);
    // Down long enough that the locks of the jobs in flight lapse (10 s): they are taken back and run again.
    await until(async () => answers.refused >= refusedBefore + 10 && Date.now() - stopped > 12_000, 60_000);
    const during = await collectionStats(svc, c);

    await redis.start();
    const figures = await recovered(svc, answers, loaders, during!.documents);
    expect(status(await call(svc, "GET", "/readyz"))).toBe(200);
    report("Redis stopped, data kept", { ...figures, pendingWhenStopped: during!.pending });
    await svc.stop();
  }, 600_000);

  it("the S3 server stopped while jobs read their documents and clients keep loading, then started again", async () => {
    const s3 = await startS3Server();
    atFileEnd(() => s3.stop());
    const svc = await startService({ mode: "distributed", workers: 2, env: { S3_ENDPOINT: s3.config.endpoint, S3_BUCKET: s3.config.bucket, WORKER_CONCURRENCY: "16" } });
    const { answers, c, loaders, readyId } = await underLoad(svc, "s3");

    await s3.down();
    const stopped = Date.now();
    const refusedBefore = answers.refused;
    const single = answers.take(1)[0]!;
    expect(unavailable(await loadOne(svc, answers, single, PROMPT_MS), "a load while S3 is down")).toMatch(/blob store unavailable/);
    expect(unavailable(await loadBulk(svc, answers, answers.take(5), PROMPT_MS), "a bulk load while S3 is down")).toMatch(/blob store unavailable/);
    expect(status(await call(svc, "GET", "/get_document_status", { query: { collection_name: c, id_value: idOf(single) } }))).toBe(404);
    await readsWork(svc, answers, readyId);
    // Jobs in flight could not read their documents' raw bytes: they wait for a retry.
    await until(async () => /blob store unavailable[^\n]*"msg":"ingestion job failed"/.test(svc.output), 60_000);
    // Down for longer than the first retries of those jobs take (1, 2, 4, 8 s apart): they keep waiting.
    await until(async () => answers.refused >= refusedBefore + 10 && Date.now() - stopped > 20_000, 60_000);
    const during = await collectionStats(svc, c);
    expect(during!.failed).toBe(0);

    await s3.restart();
    const figures = await recovered(svc, answers, loaders, during!.documents);
    report("S3 stopped", { ...figures, pendingWhenStopped: during!.pending });
    await svc.stop();
  }, 600_000);

  it("the embedding server answering 429, then 500, then slower than EMBEDDING_TIMEOUT_MS, then normally", async () => {
    const openai = await startOpenAIServer({ dimensions: 64 });
    atFileEnd(() => openai.stop());
    const svc = await startService({
      mode: "distributed",
      workers: 2,
      env: {
        ...openai.serviceEnv,
        EMBEDDING_TIMEOUT_MS: "1000",
        EMBEDDING_QUERY_TIMEOUT_MS: "1000",
        WORKER_CONCURRENCY: "16",
      },
    });
    const answers = new Answers("embedder");
    const c = answers.collection;
    for (let b = 0; b < 2; b++) expect(status(await loadBulk(svc, answers, answers.take(50)))).toBe(202);
    const readyId = await someReady(svc, c);
    const loaders = keepLoading(() => svc, answers, { clients: 2, bulk: 10, cap: 400 });

    /** One phase of the outage: the server answers every request as `fail` says, until it has been asked 8 times. */
    const failures: Record<string, number> = {};
    const phase = async (name: string, fail: (server: OpenAIServer) => void, detail: RegExp) => {
      openai.reset();
      fail(openai);
      // A search cannot embed its query: it answers at once, ranked by BM25 alone, and says why.
      const found = await readsWork(svc, answers, readyId);
      expect(found.warnings, name).toEqual([expect.stringMatching(/^query: ranked by BM25 alone, without dense vectors: embedding service unavailable/)]);
      expect(found.warnings[0], name).toMatch(detail);
      // Documents wait for the embedder, not one given up on.
      await until(async () => openai.requests >= 8, 60_000);
      const stats = await collectionStats(svc, c);
      expect(stats!.pending, name).toBeGreaterThan(0);
      expect(stats!.failed, name).toBe(0);
      failures[name] = openai.requests;
    };
    await phase("429", (server) => server.failNext(1_000_000, 429, { "retry-after": "1" }), /429 .*asked to wait 1000 ms/);
    await phase("500", (server) => server.failNext(1_000_000, 500), /500 injected failure 500/);
    // Slower than EMBEDDING_TIMEOUT_MS (and EMBEDDING_QUERY_TIMEOUT_MS): every attempt times out.
    await phase("slow", (server) => server.setDelay(2500), /timed out/);
    openai.reset();
    openai.setDelay(0);

    await until(async () => answers.loaded >= 400, 120_000);
    await loaders.stop();
    const figures = await audit(svc, answers);
    // The embedder recovered within the workers' retries: every document ends ready, searched with dense vectors again.
    expect(figures.failed).toBe(0);
    expect(answers.refused).toBe(0);
    report("embedding server failing", { ...figures, failedEmbeddingRequests: failures });
    await svc.stop();
  }, 600_000);

  it("the API killed with SIGKILL while uploads and bulk loads are in flight, then started again on the same data", async () => {
    // A load cut off between recording its version and queuing its job is the workers' recovery's to queue (lost jobs).
    const first = await startService({ mode: "distributed", workers: 2, env: { WORKER_CONCURRENCY: "16", RECOVERY_INTERVAL_S: "2" } });
    const answers = new Answers("api-kill");
    answers.unansweredExpected = true;
    // Bulk loads of texts, and uploads several at once, one in five of them a large file.
    const loaders = keepLoading(() => first, answers, { clients: 2, bulk: 25, cap: 100_000 });
    const larges = new Set<string>();
    const uploaders = keepSending(4, (c, turn) => {
      const n = answers.take(1)[0]!;
      const big = (turn + c) % 5 === 4 && larges.size < 6;
      if (big) larges.add(idOf(n));
      return upload(first, answers, n, big ? LARGE_BYTES : 0);
    });
    const slow = trickle(first, answers, answers.take(1)[0]!);
    const largeAcknowledged = () => [...larges].filter((id) => answers.acknowledged.has(id)).length;
    // Killed once a large file and a few hundred documents were acknowledged, while the slow upload still arrives.
    await until(async () => answers.acknowledged.size >= 200 && largeAcknowledged() >= 1, 120_000);
    expect(slow.progress.sent).toBeGreaterThan(1024 * 1024);
    loaders.halt();
    uploaders.halt();
    await first.kill();
    await Promise.all([loaders.stop(), uploaders.stop(), slow.answered]);
    expect(answers.unanswered.size).toBeGreaterThan(0);
    const acknowledgedAtKill = answers.acknowledged.size;

    // A new API on the same DATA_DIR, Redis and S3; the workers went on.
    const second = await startService({ dataDir: first.dataDir, env: first.env, workers: 0 });
    answers.unansweredExpected = false;
    expect(status(await loadBulk(second, answers, answers.take(10)))).toBe(202);
    expect(status(await upload(second, answers, answers.take(1)[0]!))).toBe(202);

    const figures = await audit(second, answers);
    // Every load answered before the kill ends ready; of those never answered, only whole documents exist.
    expect(figures.failed).toBe(0);
    report("API SIGKILL", { ...figures, acknowledgedAtKill, largeUploads: larges.size + 1, largeAcknowledged: largeAcknowledged() });
    await second.stop();
    await first.stop();
  }, 600_000);
});
