/**
 * The write requests. A batch of document versions is written in a fixed number of requests,
 * whatever the number of documents in it (index/qdrant/search-index.ts sends them in order):
 *
 * 1. the chunk points of documents of several chunks are upserted, in requests bounded by
 *    UPSERT_LIMITS, with ids that depend only on collection, document, version and chunk, so a
 *    retried job overwrites its own points;
 * 2. one batch request upserts their document points (after every chunk of their version, so a
 *    read that finds a document point finds all its chunks; a document of one whole chunk is
 *    that one point, points.ts), then deletes, in one operation, every point of an older
 *    version of those documents and the chunk points of the same version that an earlier
 *    attempt left (beyond the chunk count, or beside a one-point document). Qdrant applies a
 *    batch's operations in order, each on every shard before the next;
 * 3. one scroll reads the highest version of each document: a version older than one already
 *    written (a stale job, a race between two workers) is deleted again and refused.
 *
 * Between 1 and the end of 2 a document may have points of two versions: every read keeps the
 * highest version of each document it meets (search included), so an answer shows one version
 * of a document, never both, and a replaced document is never missing.
 */
import type { Schemas } from "@qdrant/js-client-rest";
import { packBatches } from "../../batches.ts";
import type { IndexedDocument } from "../../ports.ts";
import { KEY, KIND } from "./schema.ts";

/**
 * Bounds of one upsert request: Qdrant refuses requests over 32 MB by default (a point over
 * the byte bound still goes, alone).
 */
export const UPSERT_LIMITS = { points: 1024, bytes: 8 * 1024 * 1024 } as const;

type Condition = Schemas["Condition"];

const is = (key: string, value: string | number): Condition => ({ key, match: { value } });

function ofDocument(collection: string, docId: string): Condition[] {
  return [is(KEY.collection, collection), is(KEY.docId, docId)];
}

/** A version written: the number of chunks it has, or `onePoint` when it is one point of both kinds. */
export type Written = Pick<IndexedDocument, "collection" | "docId" | "version"> & { chunks: number; onePoint?: boolean };

/**
 * What a batch's versions supersede, as one filter: for each document, every point of an older
 * version, and of the written version the chunk points from its chunk count on, or, for a
 * one-point document, every point that is not a document point (its own point is one).
 */
export function supersededFilter(written: readonly Written[]): Schemas["Filter"] {
  return {
    should: written.map((doc) => ({
      must: [
        ...ofDocument(doc.collection, doc.docId),
        {
          should: [
            { key: KEY.version, range: { lt: doc.version } },
            doc.onePoint
              ? { must: [is(KEY.version, doc.version)], must_not: [is(KEY.kind, KIND.document)] }
              : { must: [is(KEY.version, doc.version), { key: KEY.chunkIndex, range: { gte: doc.chunks } }] },
          ],
        },
      ],
    })),
  };
}

/** The committed document points of these documents, to learn which version each has. */
export function versionsFilter(docs: readonly Pick<IndexedDocument, "collection" | "docId">[]): Schemas["Filter"] {
  return {
    must: [
      is(KEY.kind, KIND.document),
      { key: KEY.collection, match: { any: [...new Set(docs.map((d) => d.collection))] } },
      { key: KEY.docId, match: { any: [...new Set(docs.map((d) => d.docId))] } },
    ],
  };
}

/** Committed points of one kind, of one collection or every one, optionally of some documents only (inventory). */
export function inventoryFilter(kind: string, collection: string | null, docIds?: readonly string[]): Schemas["Filter"] {
  const must: Condition[] = [is(KEY.kind, kind)];
  if (collection !== null) must.push(is(KEY.collection, collection));
  if (docIds) must.push({ key: KEY.docId, match: { any: [...new Set(docIds)] } });
  return { must };
}

export const VERSION_PAYLOAD: Schemas["WithPayloadInterface"] = [KEY.collection, KEY.docId, KEY.version];

/** Every point of a document, or of one version of it. */
export function documentFilter(collection: string, docId: string, version?: number): Schemas["Filter"] {
  const must = ofDocument(collection, docId);
  if (version !== undefined) must.push(is(KEY.version, version));
  return { must };
}

export function collectionFilter(collection: string): Schemas["Filter"] {
  return { must: [is(KEY.collection, collection)] };
}

/** Chunks are numbered from 0: the count is one past the highest index. */
export function chunkCount(chunks: readonly { index: number }[]): number {
  return chunks.reduce((n, c) => Math.max(n, c.index + 1), 0);
}

/** Splits points into upsert requests within UPSERT_LIMITS, in order. */
export function upsertBatches(
  points: readonly Schemas["PointStruct"][],
  limits: { points: number; bytes: number } = UPSERT_LIMITS,
): Schemas["PointStruct"][][] {
  return packBatches(points, (point) => Buffer.byteLength(JSON.stringify(point), "utf8"), { items: limits.points, cost: limits.bytes });
}
