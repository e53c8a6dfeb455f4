/**
 * The index contract against a real Qdrant, started by testcontainers, where a container
 * engine is usable. Where none is (these development machines), the suite says so: one
 * skipped test and a console line, never a silent pass.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { randomUUID } from "node:crypto";
import { describeIndexContract } from "../../../test-support/index-contract.ts";
import { createQdrantClient } from "./client.ts";
import { QdrantSearchIndex } from "./search-index.ts";

/** The server release that matches @qdrant/js-client-rest 1.19. */
const IMAGE = "qdrant/qdrant:v1.19.0";
const DETECT_MS = 3000;
const SUITE = "Qdrant (real server through testcontainers)";

/** Whether testcontainers finds a working engine (Docker, Podman...), within DETECT_MS. */
async function containerEngine(): Promise<boolean> {
  const { getContainerRuntimeClient } = await import("testcontainers");
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), DETECT_MS);
  });
  try {
    return await Promise.race([getContainerRuntimeClient().then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

if (!(await containerEngine())) {
  console.log(`SearchIndex contract: ${SUITE}: skipped: no container engine on this machine`);
  describe(`SearchIndex contract: ${SUITE}`, () => {
    it.skip("skipped: no container engine on this machine", () => {});
  });
} else {
  const { QdrantContainer } = await import("@testcontainers/qdrant");
  let container: Awaited<ReturnType<InstanceType<typeof QdrantContainer>["start"]>> | undefined;
  let url = "";
  beforeAll(async () => {
    container = await new QdrantContainer(IMAGE).start();
    url = `http://${container.getRestHostAddress()}`;
  }, 300_000);
  afterAll(async () => {
    await container?.stop();
  });

  describeIndexContract(SUITE, async () => {
    // One Qdrant collection per test, so tests never see each other's points or statistics.
    const collectionName = `contract_${randomUUID().replaceAll("-", "")}`;
    const index = new QdrantSearchIndex({ url, dimensions: 3, collectionName });
    return {
      index,
      async cleanup() {
        await index.close();
        await createQdrantClient({ url }).deleteCollection(collectionName);
      },
    };
  });
}
