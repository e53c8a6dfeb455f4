import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { FsBlobStore } from "./fs.ts";
import { describeBlobStoreContract } from "../../test-support/blob-contract.ts";

describeBlobStoreContract("FsBlobStore", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "docstore-blobs-"));
  const store = new FsBlobStore(dir);
  return {
    store,
    async cleanup() {
      store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
