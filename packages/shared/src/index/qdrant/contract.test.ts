/**
 * The index contract against a real Qdrant: the one QDRANT_URL names, or one started from
 * QDRANT_BIN (test-support/qdrant-server.ts). With neither, the suite says so (one skipped
 * test whose title gives the reason), never a silent pass.
 */
import { afterAll, beforeAll } from "vitest";
import { describeIndexContract } from "../../../test-support/index-contract.ts";
import { describeIndexModel, reopening } from "../../../test-support/index-model.ts";
import { describeSkipped, QDRANT_SKIP, QdrantTestServer, qdrantSource, uniqueQdrantCollection } from "../../../test-support/qdrant-server.ts";
import { createQdrantClient } from "./client.ts";
import { QdrantSearchIndex } from "./search-index.ts";

const SUITE = "Qdrant (real server)";

if (qdrantSource() === null) {
  describeSkipped(`SearchIndex contract: ${SUITE}`, QDRANT_SKIP);
} else {
  let server: QdrantTestServer | null = null;
  beforeAll(async () => {
    server = await QdrantTestServer.fromEnv();
  });
  afterAll(async () => {
    await server?.close();
  });

  describeIndexContract(SUITE, async (options) => {
    // One Qdrant collection per test, so tests never see each other's points or statistics.
    const url = server!.url;
    const collectionName = uniqueQdrantCollection("contract");
    const index = new QdrantSearchIndex({ url, dimensions: 3, collectionName, fusion: options?.fusion });
    return {
      index,
      async cleanup() {
        await index.close();
        await createQdrantClient({ url }).deleteCollection(collectionName);
      },
    };
  });

  describeIndexModel(SUITE, async () => {
    const url = server!.url;
    const collectionName = uniqueQdrantCollection("model");
    return reopening(() => new QdrantSearchIndex({ url, dimensions: 3, collectionName }), { cleanup: () => createQdrantClient({ url }).deleteCollection(collectionName) });
  }, 15);
}
