/**
 * Reads the points the service left in its Qdrant collection, for black-box tests that audit
 * what it wrote (the counterpart of lance-index.ts for INDEX=qdrant): committed chunks and
 * documents counted, per document, and (collection, doc, chunk) keys found more than once.
 */
import type { Schemas } from "@qdrant/js-client-rest";
import { createQdrantClient } from "../src/index/qdrant/client.ts";
import { KEY, KIND } from "../src/index/qdrant/schema.ts";
import { isKind } from "../src/index/qdrant/points.ts";

export interface QdrantAudit {
  chunks: number;
  documents: number;
  duplicates: string[];
  /** Committed chunk points per `collection/doc_id`. */
  chunksPerDocument: Map<string, number>;
  /** Chunk points of a version that has no document point (a write that never finished). */
  orphans: number;
}

export async function qdrantIndexAudit(url: string, qdrantCollection: string): Promise<QdrantAudit> {
  const client = createQdrantClient({ url });
  const points: Schemas["Record"][] = [];
  let offset: Schemas["ExtendedPointId"] | undefined;
  do {
    const page = await client.scroll(qdrantCollection, {
      limit: 1000,
      with_payload: [KEY.kind, KEY.collection, KEY.docId, KEY.version, KEY.chunkIndex],
      with_vector: false,
      ...(offset === undefined ? {} : { offset }),
    });
    points.push(...page.points);
    const next = page.next_page_offset;
    offset = typeof next === "string" || typeof next === "number" ? next : undefined;
  } while (offset !== undefined);
  const seen = new Map<string, number>();
  const perDoc = new Map<string, number>();
  const versionOf = (p: Schemas["Record"]["payload"]) => JSON.stringify([p?.[KEY.collection], p?.[KEY.docId], p?.[KEY.version]]);
  const heads = new Set(points.filter((r) => isKind(r.payload, KIND.document)).map((r) => versionOf(r.payload)));
  let documents = 0;
  let orphans = 0;
  for (const { payload: p } of points) {
    if (isKind(p, KIND.document)) documents++;
    if (!isKind(p, KIND.chunk)) continue;
    if (!heads.has(versionOf(p))) orphans++;
    const key = JSON.stringify([p?.[KEY.collection], p?.[KEY.docId], p?.[KEY.chunkIndex]]);
    seen.set(key, (seen.get(key) ?? 0) + 1);
    const doc = `${String(p?.[KEY.collection])}/${String(p?.[KEY.docId])}`;
    perDoc.set(doc, (perDoc.get(doc) ?? 0) + 1);
  }
  return {
    chunks: [...seen.values()].reduce((a, b) => a + b, 0),
    documents,
    duplicates: [...seen].filter(([, n]) => n > 1).map(([key]) => key),
    chunksPerDocument: perDoc,
    orphans,
  };
}
