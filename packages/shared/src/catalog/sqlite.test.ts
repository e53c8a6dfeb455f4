import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { CATALOG_SCHEMA, openDatabase } from "../sqlite/db.ts";
import { SqliteCatalog } from "./sqlite.ts";
import { describeCatalogContract } from "../../test-support/catalog-contract.ts";

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
