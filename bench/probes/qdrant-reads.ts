/**
 * `QDRANT_BIN=../shared/qdrant/qdrant node bench/probes/qdrant-reads.ts [documents]` (default
 * 200,000): what bench:scale's reads cost Qdrant itself, docstore's requests on docstore's points
 * beside bare Qdrant's on bench:scale's bare points, in one Qdrant. Both collections hold the same
 * documents with docstore's own BM25 vectors (so the two searches score alike); bare points have
 * integer ids, bench:scale's bare payload and indexes on status, priority and created; docstore's
 * are what points.ts and schema.ts make. Each variant runs 8 at once for about a second a round,
 * the variants in turn (reversed every other round, `ROUNDS`, default 10), and the Qdrant CPU
 * milliseconds per request are summed over the rounds (runs of one variant after another moved
 * by a third with the order they ran in), with the middle half of the rounds' own figures beside
 * them: a difference between two variants inside that spread is not one. Variants:
 *   tag      the tag lookup (status=open^priority=2, ORDERBYDESC created, 100 documents with their
 *            payload; docstore's request as search-index.ts builds it: 101, the keys a page shows)
 *   search   k=10 with the payload (docstore's filter: the chunk kind and the collection)
 * each also without the payload, and docstore's search without any filter.
 */
import { QdrantTestServer } from "@docstore/shared/testing";
import { createQdrantClient } from "@docstore/shared/index/qdrant/client";
import { versionPoints } from "@docstore/shared/index/qdrant/points";
import { createCollectionRequest, KIND, metadataKey, payloadIndexRequests } from "@docstore/shared/index/qdrant/schema";
import { scopeFilter, WHOLE_PAYLOAD } from "@docstore/shared/index/qdrant/query";
import { compileFilter } from "@docstore/shared/filter/qdrant";
import { parseFilter } from "@docstore/shared/filter/parse";
import { documentVector, queryVector } from "@docstore/shared/index/qdrant/sparse";
import { queryTerms } from "@docstore/shared/search/query-terms";
import { fmt } from "../parts/lib.ts";
import { metadataJson, scaleBatches } from "../parts/scale-corpus.ts";
import { processTicks } from "../parts/distributed.ts";
import { CONCURRENCY, pool, quantile, quietAfter, scaleOptions, TAG_TEXT } from "../parts/scale-measure.ts";
import { call } from "../parts/scale-bare-qdrant.ts";

const n = Number(process.argv[2] ?? 200_000);
const ROUNDS = Number(process.env.ROUNDS ?? 10);
if (!Number.isSafeInteger(n) || n < 1) throw new Error(`documents: a positive whole number, got ${process.argv[2]}`);
if (!Number.isSafeInteger(ROUNDS) || ROUNDS < 1) throw new Error(`ROUNDS: a positive whole number, got ${process.env.ROUNDS}`);
const BARE = "bare";
const DOCSTORE = "docstore";
const { sentences, queries } = scaleOptions(0);

const qdrant = await QdrantTestServer.fromEnv();
if (!qdrant?.pid) throw new Error("set QDRANT_BIN (a Qdrant binary started here, to measure it alone)");
const client = createQdrantClient({ url: qdrant.url });

/**
 * The first and third quartiles of the rounds' figures: how far one variant moves from round to
 * round, against which a difference between two variants is read.
 */
function middleHalf(values: readonly number[]): [number, number] {
  const sorted = [...values].sort((a, b) => a - b);
  return [quantile(sorted, 0.25), quantile(sorted, 0.75)];
}

/** Each collection's segments from Qdrant's telemetry: points, appendable or not, sparse index kind. */
async function segmentsOf(names: readonly string[]): Promise<Map<string, string>> {
  type Segment = {
    info: { num_points: number; is_appendable: boolean };
    config: { sparse_vector_data?: Record<string, { index?: { index_type?: string } }> };
  };
  type Telemetry = { result: { collections: { collections: { id: string; shards?: { local?: { segments?: Segment[] } }[] }[] } } };
  const res = await fetch(`${qdrant!.url}/telemetry?details_level=4`);
  const telemetry = (await res.json()) as Telemetry;
  const out = new Map<string, string>();
  for (const name of names) {
    const collection = telemetry.result.collections.collections.find((c) => c.id === name);
    const segments = (collection?.shards ?? []).flatMap((s) => s.local?.segments ?? []).filter((s) => s.info.num_points > 0);
    const each = segments.map(
      (s) =>
        `${fmt(s.info.num_points)} points (${s.info.is_appendable ? "appendable" : "not appendable"}, ${Object.values(s.config.sparse_vector_data ?? {})[0]?.index?.index_type ?? "no sparse index"})`,
    );
    out.set(name, `${segments.length} segments holding points: ${each.join(", ")}`);
  }
  return out;
}

/** One request as bench:scale's bare side sends it; the number of points answered. */
async function post(route: string, body: unknown): Promise<number> {
  const { result } = await call(qdrant!.url, "POST", `/collections/${route}`, body);
  return ((result as { points?: unknown[] }).points ?? []).length;
}

try {
  await client.createCollection(BARE, createCollectionRequest(null));
  for (const [field, schema] of [
    ["status", "keyword"],
    ["priority", "integer"],
    ["created", "integer"],
  ] as const) {
    await client.createPayloadIndex(BARE, { field_name: field, field_schema: schema, wait: true });
  }
  await client.createCollection(DOCSTORE, createCollectionRequest(null));
  for (const index of payloadIndexRequests()) await client.createPayloadIndex(DOCSTORE, { ...index, wait: true });

  let next = 0;
  const batches = scaleBatches(sentences, n, 64);
  const writer = async () => {
    for (let batch = batches.next(); !batch.done; batch = batches.next()) {
      const docs = batch.value;
      const bare = docs.map((d) => ({
        id: ++next,
        vector: { bm25: documentVector(d.text) },
        payload: { id: d.id, text: d.text, status: d.status, priority: d.priority, created: d.createdMs, type: d.type },
      }));
      const docstore = docs.map((d) => {
        const doc = { collection: "bench", docId: d.id, version: 1, metadata: metadataJson(d), text: d.text, sha256: "0".repeat(64) };
        return versionPoints(doc, [{ index: 0, text: d.text, start: 0, end: d.text.length }]).document;
      });
      await client.upsert(BARE, { wait: true, points: bare });
      await client.upsert(DOCSTORE, { wait: true, points: docstore });
    }
  };
  await Promise.all(Array.from({ length: 4 }, writer));
  const settle = await quietAfter(() => processTicks(qdrant.pid));
  console.log(`${fmt(n)} bench:scale documents in each collection; Qdrant busy ${fmt(settle)} s after the load`);
  // Two loads of the same points can leave different segments, and a read's cost may move with them.
  for (const [name, segments] of await segmentsOf([BARE, DOCSTORE])) console.log(`  ${name}: ${segments}`);

  const vector = (i: number) => queryVector(queryTerms(queries[i % queries.length]!));
  const tagBare = (payload: boolean) => () =>
    post(`${BARE}/points/scroll`, {
      filter: {
        must: [
          { key: "status", match: { value: "open" } },
          { key: "priority", match: { value: 2 } },
        ],
      },
      order_by: { key: "created", direction: "desc" },
      limit: 100,
      with_payload: payload,
    });
  // docstore's filters as search-index.ts builds them: the tag lookup's, and a plain search's.
  const tagFilter = scopeFilter(KIND.document, ["bench"], compileFilter(parseFilter(TAG_TEXT)).condition);
  const searchFilter = scopeFilter(KIND.chunk, ["bench"], true);
  const tagDocstore = (payload: boolean) => () =>
    post(`${DOCSTORE}/points/scroll`, {
      filter: tagFilter,
      order_by: { key: metadataKey("created"), direction: "desc" },
      limit: 101,
      with_payload: payload ? WHOLE_PAYLOAD : false,
      with_vector: false,
    });
  const search = (name: string, payload: boolean, filter?: unknown) => (i: number) =>
    post(`${name}/points/query`, { query: vector(i), using: "bm25", limit: 10, with_payload: payload, ...(filter ? { filter } : {}) });
  const variants: Record<string, (i: number) => Promise<number>> = {
    "tag, bare": tagBare(true),
    "tag, docstore": tagDocstore(true),
    "tag, bare, no payload": tagBare(false),
    "tag, docstore, no payload": tagDocstore(false),
    "search, bare": search(BARE, true),
    "search, docstore": search(DOCSTORE, true, searchFilter),
    "search, docstore, no filter": search(DOCSTORE, true),
    "search, bare, no payload": search(BARE, false),
    "search, docstore, no payload": search(DOCSTORE, false, searchFilter),
  };
  const names = Object.keys(variants);
  const sums = new Map(names.map((name) => [name, { ticks: 0, calls: 0, seconds: 0, hits: 0, rounds: [] as number[] }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const before = processTicks(qdrant.pid);
      const rate = await pool(CONCURRENCY, 50, 1, variants[name]!);
      const sum = sums.get(name)!;
      const ticks = processTicks(qdrant.pid) - before;
      sum.ticks += ticks;
      sum.rounds.push((ticks * 10) / (rate.calls ?? 1));
      sum.calls += rate.calls ?? 0;
      sum.seconds += (rate.calls ?? 0) / rate.qps;
      sum.hits += rate.hits * (rate.calls ?? 0);
    }
  }
  console.log(`${ROUNDS} rounds of about a second a variant, ${CONCURRENCY} at once (the rounds' middle half in brackets):`);
  for (const [name, s] of sums) {
    const [low, high] = middleHalf(s.rounds);
    console.log(
      `  ${name.padEnd(30)} ${fmt(s.calls / s.seconds).padStart(6)} q/s, ${fmt(s.hits / s.calls, 1).padStart(5)} points, Qdrant ${fmt((s.ticks * 10) / s.calls, 2)} CPU ms a request (${fmt(low, 2)}-${fmt(high, 2)})`,
    );
  }
} finally {
  await qdrant.close();
}
