export { QdrantSearchIndex, type QdrantIndexOptions } from "./search-index.ts";
export { createQdrantClient, qdrantError, type QdrantApi, type QdrantConnection } from "./client.ts";
export { compileFilter, type CompiledFilter } from "./filter.ts";
export { createCollectionRequest, payloadIndexRequests, DEFAULT_COLLECTION, KIND, KEY, VECTORS } from "./schema.ts";
export { documentVector, queryVector, tokenId, stem, BM25 } from "./sparse.ts";
export { pointId } from "./points.ts";
export { CollectionDimensionMismatch } from "./setup.ts";
