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
import { freePort, RedisServer, startOpenAIServer, startS3Server, type OpenAIServer } from "@docstore/shared/testing";
import { atFileEnd } from "./cleanup.ts";
import { startService, tempDataDir, until } from "./harness.ts";
import {
  Answers,
  audit,
  call,
  collectionStats,
  holder,
  idOf,
  ingestQueue,
  keepLoading,
  keepSending,
  LARGE_BYTES,
  loadBulk,
  loadOne,
  ok,
  PROMPT_MS,
  readsWork,
  recovered,
  report,
  someReady,
  status,
  textOf,
  trickle,
  unavailable,
  underLoad,
  upload,
} from "./fault-load.ts";

describe("faults, distributed mode", () => {
  it("a worker killed with SIGKILL mid-batch four times in a row, each time holding the same document", async () => {
    const svc = await startService({ mode: "distributed", workers: 2 });
    const answers = new Answers("kills");
    const queue = ingestQueue(svc);
    for (let b = 0; b < 2; b++) expect(status(await loadBulk(svc, answers, answers.take(50)))).toBe(202);
    // The document every kill interrupts, queued behind those: long enough that a worker is seen
    // holding it, twice in one activation, by looks 50 ms apart that a busy machine may delay.
    // At 120,000 words a worker finished it in 250 ms, and in a CI run the surviving worker
    // finished it unseen after the first kill; at 900,000 words (about 7 MB) it takes 1.1-1.5 s.
    const big = answers.take(1)[0]!;
    const bigText = `${textOf(big)} ${Array.from({ length: 900_000 }, (_, w) => `bulk${w % 997}`).join(" ")}`;
    const first = await call(svc, "POST", "/load_text_to_collection", {
      query: { collection_name: answers.collection, doc_id: idOf(big) },
      json: { text: bigText },
    });
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
        const state = {
          round,
          kills,
          target: { state: await queue.getJobState(target), stalled: job?.stalledCounter, by: job?.processedBy, failed: job?.failedReason },
          active: (await queue.getActive()).length,
        };
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
    expect(
      kills.map((k) => k.job),
      JSON.stringify(kills),
    ).toEqual([target, target, target, target]);

    const figures = await audit(svc, answers);
    // The document that took its worker down each time is given up on, with the reason; no other is.
    const bigStatus = ok(
      await call(svc, "GET", "/get_document_status", { query: { collection_name: answers.collection, id_value: idOf(big) } }),
      "status",
    );
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
    expect(unavailable(await loadBulk(svc, answers, answers.take(5), PROMPT_MS), "a bulk load while Redis is down")).toMatch(
      /queue unavailable/,
    );
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
    const svc = await startService({
      mode: "distributed",
      workers: 2,
      env: { S3_ENDPOINT: s3.config.endpoint, S3_BUCKET: s3.config.bucket, WORKER_CONCURRENCY: "16" },
    });
    const { answers, c, loaders, readyId } = await underLoad(svc, "s3");

    await s3.down();
    const stopped = Date.now();
    const refusedBefore = answers.refused;
    const single = answers.take(1)[0]!;
    expect(unavailable(await loadOne(svc, answers, single, PROMPT_MS), "a load while S3 is down")).toMatch(/blob store unavailable/);
    expect(unavailable(await loadBulk(svc, answers, answers.take(5), PROMPT_MS), "a bulk load while S3 is down")).toMatch(
      /blob store unavailable/,
    );
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
      expect(found.warnings, name).toEqual([
        expect.stringMatching(/^query: ranked by BM25 alone, without dense vectors: embedding service unavailable/),
      ]);
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
