/**
 * SQLite's answer when another connection holds the lock a statement needs, past the busy
 * timeout (or at once, with none): better-sqlite3 throws it with `code` SQLITE_BUSY, or one of
 * its extended codes (SQLITE_BUSY_RECOVERY, SQLITE_BUSY_SNAPSHOT, SQLITE_BUSY_TIMEOUT). The
 * statement did nothing; the same one a moment later usually goes through.
 */
export function isSqliteBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^SQLITE_BUSY(_|$)/.test(code);
}
