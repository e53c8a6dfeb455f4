/**
 * DATA_DIR, checked and claimed by a process before it opens anything in it.
 *
 * The embedded mode's process holds an exclusive lock on DATA_DIR/docstore.lock for its whole
 * life: its SQLite catalog is the queue and its worker thread is the LanceDB index's only
 * writer of documents, so a second process on the same folder would corrupt both. The
 * processes of the distributed mode that share a DATA_DIR (an API and its workers on one host)
 * hold shared locks. So two embedded processes never run on one DATA_DIR, and neither do an
 * embedded and a distributed one.
 *
 * The lock is the kernel's (an open file description lock on Linux, flock on macOS, LockFileEx
 * on Windows): it is released when the process ends, however it ends, so a crash leaves nothing
 * stale behind. The file itself stays (removing it would let a process that opened the old file
 * and one that creates a new one both hold "the" lock); the exclusive holder writes its pid in
 * it, for the message a second process prints.
 */
import { closeSync, constants, ftruncateSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { access, statfs } from "node:fs/promises";
import path from "node:path";
import fsx from "fs-native-extensions";
import { ConfigError, StorageError } from "./errors.ts";

export const LOCK_FILE = "docstore.lock";

export type DataDirUse = "exclusive" | "shared";

export interface DataDirClaim {
  readonly lockFile: string;
  /** Gives the lock up (the process's end does too); once, however often it is called. */
  release(): void;
}

const code = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

/** Makes `dir` if needed and locks it; a ConfigError naming DATA_DIR says why it cannot be used. */
export function claimDataDir(dir: string, use: DataDirUse): DataDirClaim {
  const name = `DATA_DIR=${dir}`;
  try {
    if (!statSync(dir).isDirectory()) throw new ConfigError(`${name}: is a file, not a folder`);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    if (code(err) === "ENOTDIR") throw new ConfigError(`${name}: a part of its path is a file, not a folder`);
    if (code(err) !== "ENOENT") throw new ConfigError(`${name}: cannot be used (${code(err)})`);
  }
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new ConfigError(`${name}: cannot be created (${code(err)})`);
  }
  const lockFile = path.join(dir, LOCK_FILE);
  let fd: number;
  try {
    fd = openSync(lockFile, constants.O_RDWR | constants.O_CREAT, 0o644);
  } catch (err) {
    throw new ConfigError(`${name}: cannot write in it (${code(err)})`);
  }
  try {
    if (!tryLock(fd, use, name)) throw new ConfigError(`${name}: ${holder(fd, use, lockFile)}`);
    if (use === "exclusive") {
      ftruncateSync(fd, 0);
      writeSync(fd, `${process.pid}\n`, 0);
    }
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  let held = true;
  const release = () => {
    if (held) closeSync(fd);
    held = false;
  };
  return { lockFile, release };
}

function tryLock(fd: number, use: DataDirUse, name: string): boolean {
  try {
    return fsx.tryLock(fd, { shared: use === "shared" });
  } catch (err) {
    throw new ConfigError(`${name}: cannot be locked (${code(err)}); keep DATA_DIR on a local disk`);
  }
}

/** Who holds the lock `use` could not take, as the rest of the one-line message. */
function holder(fd: number, use: DataDirUse, lockFile: string): string {
  // An exclusive lock fails under shared holders or an exclusive one; a shared lock tells which.
  if (use === "exclusive" && fsx.tryLock(fd, { shared: true })) {
    fsx.unlock(fd);
    return "in use by docstore processes of the distributed mode (QUEUE=bullmq); an embedded docstore needs its DATA_DIR to itself";
  }
  const pid = Number.parseInt(readFileSync(lockFile, "utf8"), 10);
  const who = Number.isSafeInteger(pid) && pid > 0 ? ` (pid ${pid})` : "";
  return use === "exclusive"
    ? `in use by another docstore process${who}; one DATA_DIR serves one embedded docstore at a time`
    : `in use by an embedded docstore process${who}; the distributed mode cannot share its DATA_DIR`;
}

/**
 * Below this much free space DATA_DIR counts as full: SQLite grows its files a page at a time,
 * but LanceDB writes each batch's data, and its maintenance rewrites fragments, in files of
 * megabytes.
 */
export const MIN_FREE_BYTES = 1024 * 1024;

/**
 * Whether DATA_DIR can take writes now, for the readiness probe: a StorageError when it is on a
 * read-only filesystem (or not this process's to write), or has less than MIN_FREE_BYTES free.
 * One access and one statfs call, cheap enough for every probe. A quota (EDQUOT) is not seen
 * here, only when a write is refused.
 */
export async function checkDataDir(dir: string): Promise<void> {
  try {
    await access(dir, constants.W_OK);
  } catch (err) {
    throw new StorageError("read-only", `storage unavailable: DATA_DIR cannot be written (${code(err)})`, err);
  }
  const fs = await statfs(dir);
  // What this process may use: root may also use the blocks a filesystem reserves for it.
  const free = (process.getuid?.() === 0 ? fs.bfree : fs.bavail) * fs.bsize;
  if (free < MIN_FREE_BYTES) {
    throw new StorageError(
      "full",
      `no space left under DATA_DIR (${Math.floor(free / 1024)} KiB free, at least ${MIN_FREE_BYTES / 1024} KiB needed)`,
      null,
    );
  }
}
