import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describeIndexContract } from "../../test-support/index-contract.ts";
import { INDEX_SCHEMA, openDatabase } from "../sqlite/db.ts";
import { SqliteSearchIndex } from "./sqlite.ts";

describeIndexContract("SQLite", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "docstore-index-"));
  const db = openDatabase(path.join(dir, "index.sqlite"), INDEX_SCHEMA);
  const index = new SqliteSearchIndex(db);
  return {
    index,
    async cleanup() {
      await index.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
