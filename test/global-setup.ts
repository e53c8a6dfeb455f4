/**
 * Around the whole test run (vitest.config.ts globalSetup). The run gets a temporary folder of
 * its own, as TMPDIR (so os.tmpdir() in every test process), and a tag, DOCSTORE_TEST_RUN,
 * that every Redis key prefix a test makes on the machine's Redis carries (testRedisPrefix).
 * Tests clean up what they make: at the end, anything left in either fails the run, naming
 * it, and is removed, so even a failed run leaves nothing behind. (Runs of other checkouts on
 * the same machine have folders and tags of their own, so they never count here.)
 *
 * One thing is not counted: the empty `.tmpXXXXXX` folders that LanceDB's query engine makes
 * (Rust's tempfile crate) and removes only when its objects are garbage-collected, which a
 * process that ends first never does. They go with the run's folder all the same.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { deleteRedisKeys } from "@docstore/shared/testing/redis";

export default function setup(): () => Promise<void> {
  const run = randomUUID().slice(0, 8);
  const dir = mkdtempSync(path.join(tmpdir(), `docstore-run-${run}-`));
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  process.env.TMPDIR = dir;
  process.env.DOCSTORE_TEST_RUN = run;

  return async function teardown() {
    const files = readdirSync(dir).filter((name) => !isLanceTempDir(path.join(dir, name)));
    rmSync(dir, { recursive: true, force: true });
    const keys = await deleteRedisKeys(redisUrl, `test-${run}-*`);
    const left = [
      ...(files.length > 0
        ? [`${files.length} temporary folders or files (${files.slice(0, 5).join(", ")}${files.length > 5 ? ", ..." : ""})`]
        : []),
      ...(keys > 0 ? [`${keys} Redis keys under test-${run}-*`] : []),
    ];
    if (left.length > 0) throw new Error(`the tests left behind ${left.join(" and ")}; each test must remove what it makes`);
  };
}

function isLanceTempDir(file: string): boolean {
  try {
    return /^\.tmp[A-Za-z0-9]{6}$/.test(path.basename(file)) && readdirSync(file).length === 0;
  } catch {
    return false; // a file, not a folder
  }
}
