/**
 * The setup the adapter contracts (blob-contract.ts, catalog-contract.ts, index-contract.ts)
 * share: each test gets its own fixture from the adapter's factory, cleaned up after it, and a
 * random collection name, so tests that share one store (or bucket, or Redis) stay apart.
 */
import { afterEach, beforeEach } from "vitest";
import { randomUUID } from "node:crypto";

/** Registers, in the calling `describe`, a fixture per test; `ready` receives it and the test's collection name. */
export function fixturePerTest<F extends { cleanup(): Promise<void> }>(
  make: () => Promise<F>,
  ready: (fx: F, collection: string) => void,
): void {
  let fx: F | undefined;
  beforeEach(async () => {
    fx = await make();
    ready(fx, `c-${randomUUID().slice(0, 8)}`);
  });
  afterEach(async () => {
    await fx?.cleanup();
    fx = undefined;
  });
}
