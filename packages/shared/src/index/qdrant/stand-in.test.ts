/**
 * The in-memory stand-in (test-support/qdrant-fake.ts) against a real Qdrant (QDRANT_URL or
 * QDRANT_BIN): the same requests, as the adapter builds them, must get the same answers from
 * both (scores to 4 decimals; results with equal scores are avoided, as Qdrant's order among
 * them is its own). The filters are compared by filter/qdrant.property.test.ts.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Schemas } from "@qdrant/js-client-rest";
import { FakeQdrant } from "../../../test-support/qdrant-fake.ts";
import { onRealQdrant, uniqueQdrantCollection } from "../../../test-support/qdrant-server.ts";
import { createQdrantClient, statusOf, type QdrantApi } from "./client.ts";
import { prepareCollection } from "./setup.ts";
import { versionPoints } from "./points.ts";
import { chunkCount, documentFilter, supersededFilter } from "./write.ts";
import { queryVector } from "./sparse.ts";
import { rankers, rankingBatch, scopeFilter, scrollRequest, searchRequest, textRequest } from "./query.ts";
import { KIND } from "./schema.ts";
import type { Metadata } from "../../domain/metadata.ts";

type Observation = [string, unknown];

const TEXTS = [
  "the heron waded in the marsh",
  "heron heron heron herons study",
  "nothing here at all",
  "marsh birds and one heron",
  "kestrel falcon",
];
const VECTORS = [
  [1, 0, 0],
  [0.5, 0.4, 0],
  [0, 1, 0],
  [0.1, 0.2, 1],
  [1, 1, 0.7],
];
const round = (points: { payload?: Record<string, unknown> | null; score: number }[]) =>
  points.map((p) => [p.payload?.doc_id, +p.score.toFixed(4)]);
const failure = (err: unknown) => statusOf(err);

/** The same requests for both: what the adapter sends, and what it relies on in the answers. */
async function observe(client: QdrantApi, name: string): Promise<Observation[]> {
  const seen: Observation[] = [];
  const see = (label: string, value: unknown) => seen.push([label, value]);
  see("missing collection", await client.getCollection(`${name}_missing`).then(() => 200, failure));
  await prepareCollection(client, name, 3);
  see("payload indexes", Object.keys((await client.getCollection(name)).payload_schema ?? {}).sort());
  const write = async (i: number, text: string, vector: number[] | undefined, metadata: Metadata = {}, version = 1) => {
    const doc = { collection: i % 2 ? "a" : "b", docId: `d${i}`, version, metadata, text };
    const chunks = [{ index: 0, text, start: 0, end: text.length, vector }];
    const points = versionPoints(doc, chunks);
    if (points.chunks.length > 0) await client.upsert(name, { wait: true, points: points.chunks });
    const superseded = supersededFilter([{ ...doc, chunks: chunkCount(chunks), onePoint: points.chunks.length === 0 }]);
    await client.batchUpdate(name, {
      wait: true,
      operations: [{ upsert: { points: [points.document] } }, { delete: { filter: superseded } }],
    });
  };
  for (const [i, text] of TEXTS.entries()) await write(i, text, VECTORS[i], { priority: i, big: 2 ** 62 + i * 1024, huge: -(2 ** 63) });
  const chunks = scopeFilter(KIND.chunk, ["a", "b"], true)!;
  const sparse = queryVector(["heron", "marsh"]);
  const dense = [0.9, 0.1, 0.2];
  see("sparse", round((await client.query(name, searchRequest(rankers(sparse, undefined), chunks, 10, 100))).points));
  see("dense", round((await client.query(name, searchRequest(rankers(undefined, dense), chunks, 10, 100))).points));
  see("fused", round((await client.query(name, searchRequest(rankers(sparse, dense), chunks, 10, 100))).points));
  const weighted = { depth: 100, lexicalWeight: 0.5, denseWeight: 2.5 };
  see("fused, weighted", round((await client.query(name, searchRequest(rankers(sparse, dense, weighted), chunks, 10, 100))).points));
  see(
    "batch",
    (await client.queryBatch(name, rankingBatch(rankers(sparse, dense), chunks, 3))).map((l) => round(l.points)),
  );
  see("no shared term", (await client.query(name, searchRequest(rankers(queryVector(["zzz"]), undefined), chunks, 10, 100))).points.length);
  const documents = scopeFilter(KIND.document, ["a", "b"], true)!;
  const pages: unknown[] = [];
  let offset: Schemas["ExtendedPointId"] | null = null;
  do {
    const page: Schemas["ScrollResult"] = await client.scroll(name, scrollRequest(documents, offset, 2));
    pages.push(
      page.points.map((p) => [
        p.id,
        Object.keys(p.payload ?? {})
          .sort()
          .join(","),
      ]),
    );
    offset = typeof page.next_page_offset === "string" ? page.next_page_offset : null;
  } while (offset !== null);
  see("scroll pages", pages);
  const first = (pages[0] as [string][])[0]![0];
  see(
    "retrieve",
    (await client.retrieve(name, textRequest([first, "00000000-0000-0000-0000-000000000000"]))).map((r) => [r.id, r.payload]),
  );
  see(
    "payload include",
    (await client.scroll(name, { filter: documents, limit: 1, with_payload: { include: ["kind", "version"] } })).points.map(
      (p) => p.payload,
    ),
  );
  see(
    "nested payload keys",
    (
      await client.scroll(name, {
        filter: documents,
        limit: 2,
        with_payload: ["doc_id", "metadata.priority", "metadata.absent", "absent.key"],
      })
    ).points.map((p) => p.payload),
  );
  const [big] = (await client.scroll(name, { filter: documentFilter("b", "d0"), limit: 1, with_payload: ["metadata"] })).points;
  see(
    "big integers",
    JSON.stringify(big?.payload, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v)),
  );
  // A new version: the old one's points are deleted, yet Qdrant's IDF still counts them.
  await write(1, "heron heron study", VECTORS[1], {}, 2);
  await write(3, "kestrel alone here", VECTORS[3], {}, 2);
  see(
    "IDF after replacements",
    round((await client.query(name, searchRequest(rankers(queryVector(["heron", "kestrel"]), undefined), chunks, 10, 100))).points),
  );
  see(
    "wrong dimension",
    await client
      .upsert(name, { wait: true, points: [{ id: "00000000-0000-0000-0000-000000000001", vector: { dense: [1, 0] }, payload: {} }] })
      .then(() => 200, failure),
  );
  see("unpaired surrogate", await write(9, "lone \ud800", undefined).then(() => 200, failure));
  see("create again", await client.createCollection(name, { vectors: {} }).then(() => 200, failure));
  return seen;
}

onRealQdrant("Qdrant stand-in against a real Qdrant", (server) => {
  describe("Qdrant stand-in against a real Qdrant", () => {
    const name = uniqueQdrantCollection("stand_in");
    afterAll(async () => {
      await createQdrantClient({ url: server().url }).deleteCollection(name);
    });

    it("answers the adapter's requests as Qdrant does", async () => {
      const real = await observe(createQdrantClient({ url: server().url }), name);
      const fake = await observe(new FakeQdrant(), name);
      expect(fake).toEqual(real);
    });
  });
});
