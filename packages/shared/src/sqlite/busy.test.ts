import { describe, expect, it } from "vitest";
import { sqliteBusyError } from "../../test-support/sqlite-busy.ts";
import { isSqliteBusy } from "./busy.ts";

describe("isSqliteBusy", () => {
  it("tells SQLite's busy answers, extended codes included, from everything else", () => {
    expect(isSqliteBusy(sqliteBusyError())).toBe(true);
    for (const code of ["SQLITE_BUSY", "SQLITE_BUSY_RECOVERY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_BUSY_TIMEOUT"]) {
      expect(isSqliteBusy(Object.assign(new Error("locked"), { code }))).toBe(true);
    }
    for (const other of [
      new Error("SQLITE_BUSY"),
      { code: "SQLITE_BUSYNESS" },
      { code: "SQLITE_READONLY" },
      { code: 5 },
      null,
      undefined,
      "SQLITE_BUSY",
    ]) {
      expect(isSqliteBusy(other)).toBe(false);
    }
  });
});
