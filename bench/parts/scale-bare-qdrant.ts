/**
 * The engine's ceiling for `BENCH_INDEX=qdrant pnpm bench:scale`: a Qdrant of its own (same
 * binary, fresh storage) fed the same documents by 4 concurrent clients (batches of 64,
 * `wait=true`), with Qdrant's own BM25 inference (`qdrant/bm25`, IDF modifier), a keyword index
 * on status and integer indexes on priority and created; then, once Qdrant is quiet (its
 * optimizer done), the same three query sets, 8 at once: search k=10, search k=10 filtered,
 * and the tag lookup as one scroll ordered by created; then the plain searches once more, as
 * docstore's side runs them after its other sets (every process warms up as it searches); and
 * last, the first three sets again through pass-through.ts, a Node.js process in front of the
 * same Qdrant (the ceiling of any Node.js service there).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { QdrantTestServer } from "@docstore/shared/testing";
import { fmt } from "./lib.ts";
import { scaleBatches, type ScaleDoc } from "./scale-corpus.ts";
import { processTicks } from "./distributed.ts";
import {
  CONCURRENCY,
  diskBytes,
  pool,
  quietAfter,
  requestJson,
  rssSampler,
  withCpu,
  MB,
  type Rate,
  type ScaleOptions,
} from "./scale-measure.ts";

const BATCH = 64;
const WRITERS = 4;
const NAME = "bare";
const BM25 = (text: string) => ({ text, model: "qdrant/bm25" });

export interface BareQdrantFigures {
  indexedPerSec: number;
  /** Qdrant's CPU seconds per 1,000 documents loaded. */
  cpuPerThousand: number;
  /** Seconds Qdrant stayed busy after the load (its optimizer), before the query sets. */
  settle: number;
  search: Rate;
  filtered: Rate;
  tag: Rate;
  /** The plain searches once more after the other sets, as docstore's side runs them. */
  searchAgain: Rate;
  peakRss: number;
  disk: number;
  /**
   * The same query sets through pass-through.ts, a Node.js process doing the least any service
   * in front of Qdrant does (`api`: its CPU): of bare Qdrant's rate, the most such a service
   * reaches on these cores.
   */
  passThrough?: { search: Rate; filtered: Rate; tag: Rate };
}

/** One request to Qdrant's REST API (or the pass-through) with the bench's client (scale-measure.ts); its JSON answer. */
export function call(url: string, method: string, route: string, body?: unknown): Promise<{ result: unknown }> {
  return requestJson(`${url}${route}`, method, body);
}

const pointsOf = (answer: { result: unknown }) => (answer.result as { points: unknown[] }).points.length;

/** pass-through.ts started in front of Qdrant at `qdrant`: its URL and pid. */
async function passThrough(qdrant: string): Promise<{ url: string; pid: number; stop: () => void }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL("./pass-through.ts", import.meta.url)), qdrant], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`pass-through exited (${code}) before listening`)));
    child.stdout.once("data", (line: Buffer) => resolve(String(line).trim()));
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => child.kill("SIGTERM") };
}

const point = (d: ScaleDoc, n: number) => ({
  id: n,
  vector: { bm25: BM25(d.text) },
  payload: { id: d.id, text: d.text, status: d.status, priority: d.priority, created: d.createdMs, type: d.type },
});

export async function bareQdrantFigures(opts: ScaleOptions): Promise<BareQdrantFigures> {
  const qdrant = await QdrantTestServer.fromEnv();
  if (!qdrant?.pid) throw new Error("bare Qdrant: set QDRANT_BIN (a Qdrant binary started here, to measure it alone)");
  const url = qdrant.url;
  const rss = rssSampler(qdrant.pid);
  console.log(`bare Qdrant (pid ${qdrant.pid}, ${url}): ${WRITERS} clients, batches of ${BATCH}, wait=true, BM25 inference in Qdrant`);
  try {
    await call(url, "PUT", `/collections/${NAME}`, { sparse_vectors: { bm25: { modifier: "idf" } } });
    for (const [field, schema] of [
      ["status", "keyword"],
      ["priority", "integer"],
      ["created", "integer"],
    ]) {
      await call(url, "PUT", `/collections/${NAME}/index?wait=true`, { field_name: field, field_schema: schema });
    }
    const batches = scaleBatches(opts.sentences, opts.n, BATCH);
    let n = 0;
    let loaded = 0;
    const ticks = processTicks(qdrant.pid);
    const started = performance.now();
    const writer = async () => {
      for (let next = batches.next(); !next.done; next = batches.next()) {
        const points = next.value.map((d) => point(d, ++n));
        await call(url, "PUT", `/collections/${NAME}/points?wait=true`, { points });
        loaded += points.length;
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, writer));
    const seconds = (performance.now() - started) / 1000;
    const cpuPerThousand = (processTicks(qdrant.pid) - ticks) / 100 / (loaded / 1000);
    console.log(
      `  ${fmt(loaded)} points in ${fmt(seconds, 1)} s: ${fmt(loaded / seconds)} docs/s; Qdrant ${fmt(cpuPerThousand, 2)} CPU s per 1,000 documents`,
    );
    const settle = await quietAfter(() => processTicks(qdrant.pid));
    console.log(`  Qdrant busy for ${fmt(settle)} s after the load (its optimizer), before the query sets`);
    const { queries, seconds: minSeconds } = opts;
    const search =
      (filter: unknown, base = url) =>
      async (i: number) => {
        const body = {
          query: BM25(queries[i % queries.length]!),
          using: "bm25",
          limit: 10,
          with_payload: true,
          ...(filter ? { filter } : {}),
        };
        return pointsOf(await call(base, "POST", `/collections/${NAME}/points/query`, body));
      };
    const open = { key: "status", match: { value: "open" } };
    const filtered = { must: [open, { key: "priority", range: { lte: 2 } }] };
    const tag = async (base = url) => {
      const body = {
        filter: { must: [open, { key: "priority", match: { value: 2 } }] },
        order_by: { key: "created", direction: "desc" },
        limit: 100,
        with_payload: true,
      };
      return pointsOf(await call(base, "POST", `/collections/${NAME}/points/scroll`, body));
    };
    const measured = (run: () => Promise<Rate>) => withCpu({ qdrant: qdrant.pid }, processTicks, run);
    const figures: BareQdrantFigures = {
      indexedPerSec: loaded / seconds,
      cpuPerThousand,
      settle,
      search: await measured(() => pool(CONCURRENCY, queries.length, minSeconds, search(undefined))),
      filtered: await measured(() => pool(CONCURRENCY, queries.length, minSeconds, search(filtered))),
      tag: await measured(() => pool(CONCURRENCY, queries.length, minSeconds, () => tag())),
      searchAgain: await measured(() => pool(CONCURRENCY, queries.length, minSeconds, search(undefined))),
      peakRss: rss.stop(),
      disk: diskBytes(qdrant.dir!),
    };
    const through = await passThrough(url);
    try {
      const via = (query: (i: number) => Promise<number>) =>
        withCpu({ qdrant: qdrant.pid, api: through.pid }, processTicks, () => pool(CONCURRENCY, queries.length, minSeconds, query));
      figures.passThrough = {
        search: await via(search(undefined, through.url)),
        filtered: await via(search(filtered, through.url)),
        tag: await via(() => tag(through.url)),
      };
    } finally {
      through.stop();
    }
    const { passThrough: p } = figures;
    console.log(
      `  search ${fmt(figures.search.qps)} q/s (again ${fmt(figures.searchAgain.qps)}), filtered ${fmt(figures.filtered.qps)} q/s, tag ${fmt(figures.tag.qps)} q/s; peak RSS ${fmt(figures.peakRss / MB)} MB, storage ${fmt(figures.disk / MB)} MB`,
    );
    console.log(
      `  through a Node.js pass-through: search ${fmt(p.search.qps)} q/s, filtered ${fmt(p.filtered.qps)} q/s, tag ${fmt(p.tag.qps)} q/s`,
    );
    return figures;
  } finally {
    rss.stop();
    await qdrant.close();
  }
}
