/**
 * Bringing the Qdrant collection to the layout of schema.ts: created when missing, its missing
 * payload indexes added (a process that stopped half-way is completed by the next one), and the
 * sparse vector's full-scan threshold set on a collection made before it was (segments Qdrant
 * builds from then on take it).
 */
import type { QdrantApi } from "./client.ts";
import { qdrantError, statusOf } from "./client.ts";
import { DimensionMismatchError } from "../../errors.ts";
import {
  createCollectionRequest,
  denseSize,
  payloadIndexRequests,
  SPARSE_FULL_SCAN_THRESHOLD,
  SPARSE_PARAMS,
  sparseThreshold,
  VECTORS,
  type Placement,
} from "./schema.ts";

/**
 * Prepares the collection; returns the size of its dense vectors, null for none (an existing
 * collection keeps its own, and its placement).
 */
export async function prepareCollection(
  client: QdrantApi,
  name: string,
  dimensions: number | null,
  placement: Placement = {},
): Promise<number | null> {
  const read = () =>
    client.getCollection(name).catch((err: unknown) => {
      if (statusOf(err) === 404) return null;
      throw qdrantError("read the collection", err);
    });
  const info = await read();
  if (info === null) {
    // Another process may create it at the same moment: then its collection is as good.
    await client.createCollection(name, createCollectionRequest(dimensions, placement)).catch(async (err: unknown) => {
      if ((await read()) === null) throw qdrantError("create the collection", err);
    });
  }
  if (info !== null && sparseThreshold(info) !== SPARSE_FULL_SCAN_THRESHOLD) {
    await client.updateCollection(name, { sparse_vectors: { [VECTORS.sparse]: { index: SPARSE_PARAMS.index } } }).catch((err: unknown) => {
      throw qdrantError("update the sparse vector's parameters", err);
    });
  }
  const existing = new Set(Object.keys(info?.payload_schema ?? {}));
  for (const index of payloadIndexRequests().filter((i) => !existing.has(i.field_name))) {
    await client.createPayloadIndex(name, { ...index, wait: true }).catch((err: unknown) => {
      throw qdrantError("create a payload index", err);
    });
  }
  return info ? (denseSize(info) ?? null) : dimensions;
}

/** A vector of another size than the collection's, or one it has no room for: a configuration error, not bad input. */
export function collectionDimensionMismatch(collection: string, stored: number | null, given: number): DimensionMismatchError {
  const message =
    stored === null
      ? `the Qdrant collection "${collection}" was made without dense vectors (no embedder) but the embedder gives ${given}-dimensional ones: ` +
        `use another Qdrant collection (QDRANT_COLLECTION) for an embedder`
      : `the Qdrant collection "${collection}" holds ${stored}-dimensional vectors but the embedder gives ${given}: ` +
        `set EMBEDDING_DIMENSIONS=${stored} again, or use another Qdrant collection`;
  return new DimensionMismatchError(message, stored ?? 0, given);
}
