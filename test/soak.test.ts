/**
 * The soak (test/soak.ts) in both modes: 64 clients load 20,000 small texts and 200 files into
 * 20 collections, singly and in bulk, some again as new versions, while others search and fetch
 * by filter without pause, two delete documents and one deletes a collection. Then the audit:
 * every acknowledged document not deleted listed once, ready, indexed exactly once with its
 * chunk count and found by its marker; the deleted ones gone from catalog, index and blob store;
 * no 5xx, no other unexpected answer; the API's memory back down. `bench/soak.ts` prints the same figures.
 */
import { describe, expect, it } from "vitest";
import { startService, type Mode } from "./harness.ts";
import { auditSoak, cameDown, runSoak, soakReport } from "./soak.ts";

/** The whole soak, load and audit, on a loaded 2-core machine: a guard against a hang, not a speed check. */
const SOAK_MS = 1_500_000;

describe.each<Mode>(["embedded", "distributed"])("soak, %s mode", (mode) => {
  it(
    "holds the load: nothing acknowledged lost or doubled, the deleted gone, no 5xx, memory back down",
    async () => {
      const svc = await startService({ mode, env: { LOG_LEVEL: "error" } });
      const { figures, ledger } = await runSoak(svc);
      // Shown before the audit, whose failure would otherwise hide them: an answer that never came
      // (a deletion cut off, say) leaves the ledger unsure of what the service did.
      if (figures.unexpected.length > 0) console.log(`unexpected answers:\n${figures.unexpected.join("\n")}`);
      await auditSoak(svc, ledger, figures);
      console.log(soakReport(mode, figures).join("\n"));
      expect(figures.unexpected, "unexpected answers").toEqual([]);
      expect(figures.errors).toBe(0);
      expect(figures.requests).toBeGreaterThan(5_000);
      // Back down from its peak once the load and the audit's searches end (by a twentieth of
      // what the soak added, at least), and within the service's memory target (bench/scale.ts);
      // bench/soak.ts with SOAK_ROUNDS shows it level off round after round rather than grow.
      const { before, peak, after } = figures.apiRssMb;
      const memory = `API RSS MB before ${before.toFixed(0)}, peak ${peak.toFixed(0)}, after ${after.toFixed(0)}`;
      expect(after, memory).toBeLessThanOrEqual(cameDown(before, peak));
      expect(peak, memory).toBeLessThan(1_536);
    },
    SOAK_MS,
  );
});
