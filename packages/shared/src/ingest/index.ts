export { SUPPORTED_TYPES, isSupportedType, type SupportedType } from "./types.ts";
export { detectType, type DetectInput } from "./detect.ts";
export { extractText } from "./extract.ts";
export { countTokens, countTokensWithin, tokenBoundaries, TOKENIZER_ENCODING, type TokenBoundary } from "./tokenizer.ts";
export {
  chunkText,
  DEFAULT_CHUNK_TOKENS,
  DEFAULT_CHUNK_OVERLAP_TOKENS,
  MIN_CHUNK_TOKENS,
  type Chunk,
  type ChunkOptions,
} from "./chunk.ts";
