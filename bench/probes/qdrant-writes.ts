/**
 * `QDRANT_BIN=../shared/qdrant/qdrant node bench/probes/qdrant-writes.ts [documents] [variants]`
 * (default 200,000 documents, every variant): what each part of docstore's write path costs
 * Qdrant, without the rest of the service. Each variant is a Qdrant of its own fed bench:scale's
 * documents by 4 writers in batches of 32 (`PROBE_BATCH`), every point with docstore's own BM25 vector (so
 * only the payload, the indexes and the requests differ), and prints the rate, Qdrant's CPU
 * seconds per 1,000 documents while loading and once its optimizer is quiet again, and its
 * storage. Variants, each adding one part to the one before it:
 *   bare     bench:scale's bare Qdrant payload, indexes on status, priority and created
 *   points   docstore's points (points.ts), indexes on the same three fields
 *   indexes  docstore's points and payload indexes (schema.ts)
 *   delete   the commit as docstore sends it: upsert and superseding delete in one batch
 *   scroll   then the versions scroll: docstore's write path for documents of one chunk
 */
import { QdrantTestServer } from "@docstore/shared/testing";
import { createQdrantClient } from "@docstore/shared/index/qdrant/client";
import { versionPoints } from "@docstore/shared/index/qdrant/points";
import { createCollectionRequest, metadataKey, payloadIndexRequests } from "@docstore/shared/index/qdrant/schema";
import { documentVector } from "@docstore/shared/index/qdrant/sparse";
import { supersededFilter, VERSION_PAYLOAD, versionsFilter } from "@docstore/shared/index/qdrant/write";
import type { IndexedDocument } from "@docstore/shared/ports";
import { fmt } from "../parts/lib.ts";
import { scaleBatches, metadataJson, type ScaleDoc } from "../parts/scale-corpus.ts";
import { processTicks } from "../parts/distributed.ts";
import { diskBytes, quietAfter, scaleOptions, MB } from "../parts/scale-measure.ts";

const BATCH = Number(process.env.PROBE_BATCH ?? 32);
if (!Number.isSafeInteger(BATCH) || BATCH < 1) throw new Error(`PROBE_BATCH: a whole number of documents, got ${process.env.PROBE_BATCH}`);
const WRITERS = 4;
const NAME = "probe";
const VARIANTS = ["bare", "points", "indexes", "delete", "scroll"] as const;
type Variant = (typeof VARIANTS)[number];

const n = Number(process.argv[2] ?? 200_000);
const chosen = (process.argv[3]?.split(",") ?? VARIANTS) as Variant[];
const { sentences } = scaleOptions(0);
const step = (v: Variant) => VARIANTS.indexOf(v);

type Point = ReturnType<typeof versionPoints>["document"];

const threeIndexes = (docstore: boolean): ReturnType<typeof payloadIndexRequests> =>
  (
    [
      ["status", "keyword"],
      ["priority", "integer"],
      ["created", docstore ? "datetime" : "integer"],
    ] as const
  ).map(([field, schema]) => ({ field_name: docstore ? metadataKey(field) : field, field_schema: schema }));

function pointOf(variant: Variant, d: ScaleDoc, n: number): Point {
  if (variant === "bare") {
    return {
      id: n,
      vector: { bm25: documentVector(d.text) },
      payload: { id: d.id, text: d.text, status: d.status, priority: d.priority, created: d.createdMs, type: d.type },
    };
  }
  const doc: IndexedDocument = { collection: "bench", docId: d.id, version: 1, metadata: metadataJson(d), text: d.text };
  return versionPoints(doc, [{ index: 0, text: d.text, start: 0, end: d.text.length }]).document;
}

async function measure(variant: Variant): Promise<void> {
  const qdrant = await QdrantTestServer.fromEnv();
  if (!qdrant?.pid) throw new Error("set QDRANT_BIN (a Qdrant binary started here, to measure it alone)");
  const client = createQdrantClient({ url: qdrant.url });
  try {
    await client.createCollection(NAME, createCollectionRequest(null));
    const indexes = step(variant) >= step("indexes") ? payloadIndexRequests() : threeIndexes(variant !== "bare");
    for (const index of indexes) await client.createPayloadIndex(NAME, { ...index, wait: true });
    const batches = scaleBatches(sentences, n, BATCH);
    let next = 0;
    const before = processTicks(qdrant.pid);
    const started = performance.now();
    const writer = async () => {
      for (let batch = batches.next(); !batch.done; batch = batches.next()) {
        const points = batch.value.map((d) => pointOf(variant, d, ++next));
        if (step(variant) < step("delete")) {
          await client.upsert(NAME, { wait: true, points });
          continue;
        }
        const superseded = supersededFilter(
          batch.value.map((d) => ({ collection: "bench", docId: d.id, version: 1, chunks: 1, onePoint: true })),
        );
        await client.batchUpdate(NAME, { wait: true, operations: [{ upsert: { points } }, { delete: { filter: superseded } }] });
        if (variant === "scroll") {
          const docs = batch.value.map((d) => ({ collection: "bench", docId: d.id }));
          await client.scroll(NAME, { filter: versionsFilter(docs), limit: 512, with_payload: VERSION_PAYLOAD, with_vector: false });
        }
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, writer));
    const seconds = (performance.now() - started) / 1000;
    const loading = (processTicks(qdrant.pid) - before) / 100;
    const settle = await quietAfter(() => processTicks(qdrant.pid));
    const total = (processTicks(qdrant.pid) - before) / 100;
    const perThousand = (cpu: number) => fmt(cpu / (n / 1000), 2);
    console.log(
      `${variant.padEnd(8)} ${fmt(n / seconds)} docs/s; Qdrant CPU s per 1,000 documents: ${perThousand(loading)} loading, ` +
        `${perThousand(total)} with its optimizer after (busy ${fmt(settle)} s); storage ${fmt(diskBytes(qdrant.dir!) / MB)} MB`,
    );
  } finally {
    await qdrant.close();
  }
}

console.log(`${fmt(n)} bench:scale documents, ${WRITERS} writers, batches of ${BATCH}, wait=true; a Qdrant of its own per variant`);
for (const variant of chosen) {
  if (!VARIANTS.includes(variant)) throw new Error(`unknown variant ${variant}: ${VARIANTS.join(", ")}`);
  await measure(variant);
}
