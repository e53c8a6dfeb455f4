import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { CATALOG_SCHEMA, openDatabase } from "./db.ts";
import { SqliteCatalog } from "./catalog.ts";
import { describeCatalogContract } from "../testing/catalog-contract.ts";

describeCatalogContract("SqliteCatalog", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "docstore-catalog-"));
  const catalog = new SqliteCatalog(openDatabase(path.join(dir, "catalog.sqlite"), CATALOG_SCHEMA));
  return {
    catalog,
    async cleanup() {
      await catalog.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
