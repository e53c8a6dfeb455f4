/**
 * Test support for the suites and benchmarks outside this package, as
 * `@docstore/shared/testing`: servers the tests start, and fixtures they make. It lives outside
 * `src`, so none of it ships in the image. (This package's own tests import the modules here
 * directly.)
 */
export { startS3Server, type S3TestServer } from "./s3-server.ts";
export { startOpenAIServer, fakeEmbedding, type OpenAIServer } from "./openai-server.ts";
export { RedisServer, freePort, portAnswers, testRedisPrefix, deleteRedisKeys } from "./redis-server.ts";
export { makePdf, makeScannedPdf } from "./pdf-fixture.ts";
export { makeDocx, makeOdt, makePptx, makeXlsx, makeZipBomb } from "./office-fixtures.ts";
export { indexAudit, indexRows, indexCounts, type IndexRow, type LanceAudit } from "./lance-index.ts";
export {
  QdrantTestServer,
  qdrantSource,
  uniqueQdrantCollection,
  QDRANT_SKIP,
  QDRANT_BIN_SKIP,
  describeSkipped,
  deleteQdrantCollection,
} from "./qdrant-server.ts";
export { qdrantIndexAudit, type QdrantAudit } from "./qdrant-index.ts";
export { QdrantCluster } from "./qdrant-cluster.ts";
export { HOSTILE_VALUES, LOOKALIKE_IDS, filterValue } from "./hostile-values.ts";
export { startJwksServer, type JwksServer, type SignOptions } from "./jwks-server.ts";
export { sqliteBusyError } from "./sqlite-busy.ts";
