/**
 * The docstore side of `pnpm bench:scale`: the embedded service in a fresh DATA_DIR, loaded
 * over HTTP (500 documents a request, 4 requests at once, one collection), then the three
 * query sets from 8 concurrent clients; memory of the service process and disk of DATA_DIR.
 */
import { writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { removeDir, startService, type Service } from "../../test/harness.ts";
import { fmt } from "./lib.ts";
import { metadataJson, scaleBatches } from "./scale-corpus.ts";
import {
  CONCURRENCY,
  FILTER_TEXT,
  TAG_TEXT,
  diskBytes,
  pool,
  procBytes,
  requestJson,
  rssSampler,
  threadSeconds,
  MB,
  type ScaleOptions,
  type SideFigures,
  type Rate,
} from "./scale-measure.ts";

const TOKEN = "bench-scale-token-0123456789abcdef";
const COLLECTION = "scale";
const BATCH = 500;
const IN_FLIGHT = 4;
/** Indexing that makes no progress for this long is reported as stuck. */
const STALL_MS = 300_000;

interface Counts {
  ready: number;
  pending: number;
  failed: number;
}

/** Everything in the bench's environment reaches the service (INDEX, QDRANT_URL...), except what the harness owns. */
export function serviceEnv(): Record<string, string> {
  const env: Record<string, string> = { LOG_LEVEL: "warn" };
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "PORT" && k !== "DATA_DIR") env[k] = v;
  return { ...env, API_TOKENS: TOKEN };
}

/** A request of the bench's client to the service (scale-measure.ts): GET without a body, else POST. */
function call(svc: Service, route: string, body: unknown): Promise<any> {
  return requestJson(new URL(route, svc.url).href, body === undefined ? "GET" : "POST", body, { authorization: `Bearer ${TOKEN}` });
}

async function counts(svc: Service): Promise<Counts> {
  const r = await call(svc, "/get_list_of_collection", undefined);
  const c = r.collections.find((x: { name: string }) => x.name === COLLECTION);
  return { ready: c?.ready ?? 0, pending: c?.pending ?? 0, failed: c?.failed ?? 0 };
}

/**
 * The request bodies of the load, made before its clock starts, as bare LanceDB's rows are made
 * before its own: on a machine of two cores, making them while loading would take CPU from the
 * service (3.4-4.5 CPU-seconds a 200,000 documents, measured), and a batch job's data is usually
 * made elsewhere.
 */
export function requestBodies(opts: ScaleOptions): Bodies {
  const bodies: Bodies["bodies"] = [];
  let rawBytes = 0;
  for (const batch of scaleBatches(opts.sentences, opts.n, BATCH)) {
    const documents = batch.map((d) => {
      rawBytes += Buffer.byteLength(d.text);
      return { doc_id: d.id, text: d.text, metadata: metadataJson(d) };
    });
    bodies.push({ payload: Buffer.from(JSON.stringify({ documents })), documents: documents.length });
  }
  return { bodies, rawBytes };
}

export interface Bodies {
  bodies: { payload: Buffer; documents: number }[];
  rawBytes: number;
}

/** What a load has sent and had accepted so far. */
export interface Sending {
  sent: number;
  accepted: number;
}

/** Posts the bodies to the bench's collection, IN_FLIGHT requests at once, counting into `sending`. */
export async function send(svc: Service, { bodies }: Bodies, sending: Sending): Promise<void> {
  let next = 0;
  const sender = async () => {
    while (next < bodies.length) {
      const { payload, documents } = bodies[next++]!;
      sending.sent += documents;
      const r = await call(svc, `/load_texts_to_collection?collection_name=${COLLECTION}`, payload);
      sending.accepted += r.documents.length;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
}

/** Waits until `accepted` documents of the bench's collection are ready or failed; fails when none becomes so for STALL_MS. */
export async function settled(svc: Service, accepted: number): Promise<Counts> {
  let last = { ready: -1, at: performance.now() };
  for (;;) {
    const now = await counts(svc);
    if (now.ready + now.failed >= accepted) return now;
    if (now.ready !== last.ready) last = { ready: now.ready, at: performance.now() };
    else if (performance.now() - last.at > STALL_MS) throw new Error(`indexing stuck at ${now.ready} ready, ${now.pending} pending`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Searches made while a load runs: one client, one search every DURING_EVERY_MS at most. */
const DURING_EVERY_MS = 250;

/**
 * One client searching while the load goes on (as an assistant's users would), from the first
 * accepted request until `done` resolves: each search timed; a search that fails counts as an error.
 */
async function searchWhile(
  svc: Service,
  opts: ScaleOptions,
  sending: Sending,
  done: Promise<unknown>,
): Promise<Rate & { slowest: { at: number; ms: number }[] }> {
  let ended = false;
  void done.finally(() => (ended = true));
  const search = searchCall(svc, opts.queries, undefined);
  const latencies: number[] = [];
  const calls: { at: number; ms: number }[] = [];
  let hits = 0;
  let errors = 0;
  const started = performance.now();
  while (!ended && sending.accepted === 0) await sleep(50);
  for (let i = 0; !ended; i++) {
    const t = performance.now();
    try {
      hits += await search(i);
    } catch {
      errors++;
    }
    const ms = performance.now() - t;
    latencies.push(ms);
    calls.push({ at: (t - started) / 1000, ms });
    if (!ended) await sleep(Math.max(0, DURING_EVERY_MS - ms));
  }
  latencies.sort((a, b) => a - b);
  const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return {
    qps: latencies.length / ((performance.now() - started) / 1000),
    p50: p(0.5),
    p99: p(0.99),
    max: latencies.at(-1) ?? NaN,
    calls: latencies.length,
    hits: hits / Math.max(1, latencies.length - errors),
    errors,
    slowest: calls.sort((a, b) => b.ms - a.ms).slice(0, 3),
  };
}

/**
 * Loads the N documents; returns raw text bytes, seconds until all were indexed, acceptance rate,
 * and the searches made meanwhile (settled once the one under way when the last document became
 * ready has answered).
 */
export async function load(svc: Service, opts: ScaleOptions) {
  const bodies = requestBodies(opts);
  const sending: Sending = { sent: 0, accepted: 0 };
  let now: Counts = { ready: 0, pending: 0, failed: 0 };
  let loaded!: () => void;
  const during = searchWhile(svc, opts, sending, new Promise<void>((resolve) => (loaded = resolve)));
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const progress = setInterval(() => {
    console.log(
      `  ${fmt(elapsed(), 0)} s: sent ${fmt(sending.sent)}, accepted ${fmt(sending.accepted)}, indexed ${fmt(now.ready)} (${fmt(now.ready / elapsed())} docs/s), pending ${fmt(now.pending)}`,
    );
  }, 10_000);
  const poller = setInterval(
    () =>
      void counts(svc).then(
        (c) => (now = c),
        () => {},
      ),
    500,
  );
  try {
    await send(svc, bodies, sending);
    const { accepted } = sending;
    const acceptSeconds = elapsed();
    const cpu = process.cpuUsage(cpuBefore);
    console.log(`  the bench's client used ${fmt((cpu.user + cpu.system) / 1e6, 1)} CPU s while sending`);
    now = await settled(svc, accepted);
    const seconds = elapsed();
    console.log(
      `  all ${fmt(accepted)} accepted in ${fmt(acceptSeconds, 1)} s (${fmt(accepted / acceptSeconds)} docs/s); ${fmt(now.ready)} ready, ${fmt(now.failed)} failed after ${fmt(seconds, 1)} s`,
    );
    loaded();
    // Not waited for: a search still under way must not hold back the first searches after the load.
    const searches = during.then((rate) => {
      console.log(
        `  ${fmt(rate.calls ?? 0)} searches while loading: p50 ${fmt(rate.p50, 0)} ms, p99 ${fmt(rate.p99, 0)} ms, max ${fmt(rate.max ?? NaN, 0)} ms, ${fmt(rate.errors)} failed; ` +
          `the slowest ${rate.slowest.map((c) => `${fmt(c.ms, 0)} ms at ${fmt(c.at, 1)} s`).join(", ")}`,
      );
      return rate;
    });
    return { rawBytes: bodies.rawBytes, seconds, ready: now.ready, acceptedPerSec: accepted / acceptSeconds, during: searches };
  } finally {
    loaded();
    clearInterval(progress);
    clearInterval(poller);
  }
}

/** One search of the bench's collection (the i-th query, k=10), with `metadata` as its filter; its number of results. */
export function searchCall(svc: Service, queries: readonly string[], metadata: string | undefined): (i: number) => Promise<number> {
  return async (i) => {
    const q = encodeURIComponent(queries[i % queries.length]!);
    const r = await call(svc, `/get_relevant_documents?k=10&query=${q}`, {
      collection_names: [COLLECTION],
      ...(metadata ? { metadata } : {}),
    });
    return r.results.length as number;
  };
}

/** One tag lookup of the bench's collection (TAG_TEXT, limit 100); its number of documents. */
export function tagCall(svc: Service): () => Promise<number> {
  return async () => {
    const r = await call(svc, `/get_content_by_tag?collection_name=${COLLECTION}&limit=100`, { tag_info: TAG_TEXT });
    return r.documents.length as number;
  };
}

/**
 * The query sets, one after the other; `phase` is told each set's name as it starts,
 * `measure` wraps each set's run (withCpu, to add CPU per call), and `afterFirst` runs between
 * the first searches after the load and the others (to let Qdrant's optimizer finish).
 */
export async function querySets(
  svc: Service,
  opts: ScaleOptions,
  phase: (name: string) => void = () => {},
  measure: (run: () => Promise<Rate>) => Promise<Rate> = (run) => run(),
  afterFirst: () => Promise<unknown> = async () => {},
) {
  const { queries, seconds } = opts;
  const search = (metadata: string | undefined) => searchCall(svc, queries, metadata);
  const tag = tagCall(svc);
  const set = (name: string, run: () => Promise<Rate>) => {
    phase(name);
    return measure(run);
  };
  const first = await set("first searches", () => pool(CONCURRENCY, 16, 0, search(undefined)));
  await afterFirst();
  return {
    first,
    search: await set("search", () => pool(CONCURRENCY, queries.length, seconds, search(undefined))),
    filtered: await set("filtered search", () => pool(CONCURRENCY, queries.length, seconds, search(FILTER_TEXT))),
    tag: await set("tag lookup", () => pool(CONCURRENCY, queries.length, seconds, tag)),
    searchSettled: await set("search again", () => pool(CONCURRENCY, queries.length, seconds, search(undefined))),
  };
}

export interface ServiceFigures extends SideFigures {
  acceptedPerSec: number;
  /**
   * The plain search set again, after the others: at 200,000 documents the maintenance run that
   * merges the two fragments a load leaves (10 s after the one that folded in its end) falls here.
   */
  searchSettled: Rate;
  /**
   * DATA_DIR right after the query sets (SQLite's WAL included); `disk` is once maintenance has
   * removed what it replaced (settleSeconds later), after an orderly stop.
   */
  diskRunning: number;
  settleSeconds: number;
}

/**
 * Waits until `dir`'s size has not changed for `quietMs` (at most `maxMs`): maintenance removes
 * the versions it replaced keepVersionsMs (10 s) after the run that replaced them, and a run
 * that merges fragments replaces more. Returns the seconds waited.
 */
async function diskSettled(dir: string, quietMs = 15_000, maxMs = 90_000): Promise<number> {
  const started = Date.now();
  let size = diskBytes(dir);
  let since = started;
  while (Date.now() - since < quietMs && Date.now() - started < maxMs) {
    await sleep(1_000);
    const now = diskBytes(dir);
    if (now !== size) [size, since] = [now, Date.now()];
  }
  return (Date.now() - started) / 1_000;
}

/**
 * With SETTLE_SEARCHING=<seconds>, before the wait above: that long of one client searching
 * twice a second, as an assistant's traffic goes on after a load, printing each change of
 * DATA_DIR's size: maintenance runs that only tidy wait for the searches to pause, up to a bound.
 */
async function diskWhileSearching(svc: Service, opts: ScaleOptions, seconds: number): Promise<void> {
  const started = Date.now();
  const search = searchCall(svc, opts.queries, undefined);
  let size = diskBytes(svc.dataDir);
  console.log(`  searching twice a second for ${fmt(seconds)} s: DATA_DIR ${fmt(size / MB)} MB`);
  for (let i = 0; Date.now() - started < seconds * 1_000; i++) {
    await Promise.all([search(i), sleep(500)]);
    const now = diskBytes(svc.dataDir);
    if (now !== size) console.log(`    ${fmt((Date.now() - started) / 1_000, 1)} s: ${fmt(now / MB)} MB`);
    size = now;
  }
}

export async function serviceFigures(opts: ScaleOptions): Promise<ServiceFigures> {
  const searching = Number(process.env.SETTLE_SEARCHING ?? 0);
  if (!(searching >= 0)) throw new Error(`SETTLE_SEARCHING: seconds, not ${process.env.SETTLE_SEARCHING}`);
  const svc = await startService({ env: serviceEnv() });
  const pid = svc.proc.pid!;
  const rss = rssSampler(pid, "loading");
  console.log(`docstore: embedded service (INDEX=${process.env.INDEX ?? "lancedb"}) pid ${pid}, DATA_DIR ${svc.dataDir}`);
  try {
    const loaded = await load(svc, opts);
    const indexedPerSec = loaded.ready / loaded.seconds;
    console.log(`  end-to-end: ${fmt(indexedPerSec)} docs/s indexed; raw text ${fmt(loaded.rawBytes / MB, 1)} MB`);
    console.log(`  CPU s by service thread when the last was ready: ${threadSeconds(pid)}`);
    const sets = await querySets(svc, opts, (name) => (rss.phase = name));
    const peakRss = rss.stop();
    console.log(`  the service's peak RSS was sampled during: ${rss.peakPhase}`);
    const hwm = procBytes(pid, "VmHWM");
    const diskRunning = diskBytes(svc.dataDir);
    if (searching > 0) await diskWhileSearching(svc, opts, searching);
    const settleSeconds = await diskSettled(svc.dataDir);
    await svc.stop();
    const disk = diskBytes(svc.dataDir);
    return {
      indexedPerSec,
      indexSeconds: loaded.seconds,
      acceptedPerSec: loaded.acceptedPerSec,
      during: await loaded.during,
      ...sets,
      peakRss,
      hwm,
      disk,
      diskRunning,
      settleSeconds,
      rawBytes: loaded.rawBytes,
    };
  } catch (err) {
    console.error(
      `docstore side failed; service exit ${svc.proc.exitCode} ${svc.proc.signalCode}; its output:\n` + svc.output.slice(-3000),
    );
    throw err;
  } finally {
    rss.stop();
    await svc.stop();
    if (process.env.BENCH_SERVICE_LOG) writeFileSync(process.env.BENCH_SERVICE_LOG, svc.output);
    if (opts.keep) console.log(`  kept DATA_DIR ${svc.dataDir}`);
    else removeDir(svc.dataDir);
  }
}
