/**
 * A write the filesystem under DATA_DIR refused, told apart from other failures, as each store
 * reports it: Node's errno codes (the fs blob store, DATA_DIR itself), SQLite's result codes
 * (better-sqlite3's `code`), and LanceDB's messages, which end in the operating system's own
 * text and number ("No space left on device (os error 28)").
 */
import { StorageError } from "./errors.ts";

/** A code (errno or SQLite's) and the condition it means. */
const CODES: Record<string, { reason: StorageError["reason"]; means: string }> = {
  ENOSPC: { reason: "full", means: "no space left on device" },
  EDQUOT: { reason: "full", means: "disk quota exceeded" },
  SQLITE_FULL: { reason: "full", means: "database or disk is full" },
  EROFS: { reason: "read-only", means: "read-only file system" },
  EACCES: { reason: "read-only", means: "permission denied" },
  EPERM: { reason: "read-only", means: "operation not permitted" },
  SQLITE_READONLY: { reason: "read-only", means: "attempt to write a read-only database" },
};

/** The operating system's text for each code, as Rust's io::Error prints it (glibc, musl and BSD spellings). */
const MESSAGES: [RegExp, string][] = [
  [/No space left on device \(os error \d+\)/, "ENOSPC"],
  [/Dis[kc] quota exceeded \(os error \d+\)/, "EDQUOT"],
  [/Read-only file system \(os error \d+\)/, "EROFS"],
  [/Permission denied \(os error \d+\)/, "EACCES"],
  [/Operation not permitted \(os error \d+\)/, "EPERM"],
];

function codeOf(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string") {
    if (code in CODES) return code;
    // SQLITE_READONLY_ROLLBACK, SQLITE_READONLY_DIRECTORY...: extended codes of the same refusal.
    if (code.startsWith("SQLITE_READONLY_")) return "SQLITE_READONLY";
  }
  const message = err instanceof Error ? err.message : "";
  return MESSAGES.find(([pattern]) => pattern.test(message))?.[1] ?? null;
}

/**
 * `err` as a StorageError when it is a refusal of the filesystem (no space, over quota,
 * read-only, not permitted), else null. `place` names what was being written, relative to
 * DATA_DIR (`catalog.sqlite`, `index/`), for the detail a client and the log get.
 */
export function storageError(err: unknown, place: string): StorageError | null {
  if (err instanceof StorageError) return err;
  const code = codeOf(err);
  if (code === null) return null;
  const { reason, means } = CODES[code]!;
  const detail =
    reason === "full"
      ? `no space left under DATA_DIR (${place}: ${means}, ${code}); free space or grow the volume, then retry`
      : `storage unavailable: ${place} under DATA_DIR cannot be written (${means}, ${code})`;
  return new StorageError(reason, detail, err);
}

/** Runs `write`; a refusal of the filesystem is thrown as a StorageError (see storageError), anything else as it is. */
export function writing<T>(place: string, write: () => T): T {
  try {
    return write();
  } catch (err) {
    throw storageError(err, place) ?? err;
  }
}
