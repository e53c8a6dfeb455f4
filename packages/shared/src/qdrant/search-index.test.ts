import { describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { describeIndexContract } from "../testing/index-contract.ts";
import { parseFilter } from "../filter/index.ts";
import { UnavailableError } from "../errors.ts";
import { FakeQdrant } from "./fake-client.ts";
import { QdrantSearchIndex } from "./search-index.ts";

// The adapter's logic against the in-memory stand-in (not Qdrant; see fake-client.ts).
describeIndexContract("Qdrant adapter on an in-memory stand-in", async () => {
  const index = new QdrantSearchIndex({ client: new FakeQdrant(), dimensions: 3, collectionName: `t-${randomUUID()}` });
  return { index, cleanup: () => index.close() };
});
