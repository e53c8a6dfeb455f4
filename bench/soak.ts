/**
 * `pnpm bench:soak`: the soak of test/soak.test.ts (64 clients loading 20,000 small texts and 200
 * files into 20 collections while others search, fetch by filter and delete), in the embedded
 * and the distributed mode (API, two workers, Redis, the S3 server, the shared index), with its
 * audit; prints the requests, unexpected answers, latencies and memory of each run, and the
 * API's memory for a minute after. Asserts only what the audit asserts (nothing lost or doubled).
 *   SOAK_MODES=embedded,distributed   the modes run, in turn (default both)
 *   SOAK_TEXTS=20000 SOAK_FILES=200 SOAK_LOADERS=64 SOAK_COLLECTIONS=20   the load
 *   SOAK_ROUNDS=1     the soak again on the same service, into new collections: a leak grows round by round
 */
import { startService, type Mode } from "../test/harness.ts";
import { auditSoak, rssMb, runSoak, SOAK, soakReport, type SoakOptions } from "../test/soak.ts";

const modes = (process.env.SOAK_MODES ?? "embedded,distributed").split(",") as Mode[];
for (const m of modes) if (m !== "embedded" && m !== "distributed") throw new Error(`SOAK_MODES: embedded and/or distributed, not ${m}`);
const int = (name: string, fallback: number) => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name}: a positive integer, not ${process.env[name]}`);
  return v;
};
const options: SoakOptions = {
  ...SOAK,
  texts: int("SOAK_TEXTS", SOAK.texts),
  files: int("SOAK_FILES", SOAK.files),
  loaders: int("SOAK_LOADERS", SOAK.loaders),
  collections: int("SOAK_COLLECTIONS", SOAK.collections),
};
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));

console.log(
  `docstore soak bench: ${options.loaders} loading clients, ${options.texts} texts and ${options.files} files into ${options.collections} collections; ${options.searchers} searching, ${options.fetchers} fetching by filter, ${options.deleters} deleting; Node ${process.version}; one run a mode`,
);
const rounds = int("SOAK_ROUNDS", 1);
for (const mode of modes) {
  const svc = await startService({ mode, env: { LOG_LEVEL: "error" } });
  try {
    for (let round = 1; round <= rounds; round++) {
      const { figures, ledger } = await runSoak(svc, options, console.log);
      await auditSoak(svc, ledger, figures);
      console.log(soakReport(rounds > 1 ? `${mode}, round ${round}` : mode, figures).join("\n"));
      console.log(
        `  audit: every acknowledged document not deleted held once and found by its marker; the deleted gone from catalog, index and blob store (0 lost, 0 doubled)`,
      );
    }
    const trail = [rssMb(svc.proc.pid)];
    for (const wait of [25, 30, 30]) {
      await new Promise((r) => setTimeout(r, wait * 1000));
      trail.push(rssMb(svc.proc.pid));
    }
    console.log(`  API RSS MB 0, 30, 60 and 90 s after the last audit: ${trail.map((m) => m.toFixed(0)).join(", ")}`);
  } finally {
    await svc.stop();
  }
}
