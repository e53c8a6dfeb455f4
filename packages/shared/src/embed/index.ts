export { OpenAIEmbedder, DimensionMismatchError, EmbeddingRejectedError, MAX_INPUTS_PER_REQUEST, MAX_TOKENS_PER_REQUEST, type OpenAIEmbedderOptions } from "./openai.ts";
export { retryAfterMs, retryable, backoffMs } from "./retry.ts";
export { SqliteEmbeddingCache, MemoryEmbeddingCache, textHash, vectorToBlob, blobToVector, type EmbeddingCache, type CachedVector } from "./cache.ts";
export { reciprocalRankFusion, dot, normalize, cosine, RRF_K, type Fused } from "./fusion.ts";
