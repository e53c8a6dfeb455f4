/**
 * `pnpm bench:kept`: searches on a DATA_DIR that `pnpm bench:scale` kept (`KEEP=1`), without
 * loading it again. First in this process, on its LanceDB table: full-text searches (8 at once)
 * that return three sets of columns, to show what each read of a hit's row costs; then the
 * embedded service started on that DATA_DIR, searched and asked for tag lookups over HTTP as
 * bench:scale does, with the CPU each call cost each thread of the service and this client.
 * Prints figures; asserts nothing.
 *   DATA_DIR          the kept folder (required; bench:scale prints it)
 *   ROUNDS=2          rounds of each measure, one after the other
 *   BENCH_SECONDS=8   least duration of each
 */
import path from "node:path";
import { connect, MatchQuery, Operator } from "@lancedb/lancedb";
import { startService } from "../test/harness.ts";
import { fmt, scifact } from "./parts/lib.ts";
import { CONCURRENCY, TAG_TEXT, pool, threadTicks, type Rate } from "./parts/scale-measure.ts";
import { searchCall, serviceEnv, tagCall } from "./parts/scale-service.ts";
import { queryTerms } from "@docstore/shared/search/query-terms";

const dataDir = process.env.DATA_DIR;
if (!dataDir) throw new Error("DATA_DIR: the folder bench:scale kept (KEEP=1)");
const rounds = Number(process.env.ROUNDS ?? 2);
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const queries = scifact().tests.map((t) => t.text);
const rate = (r: Rate) => `${fmt(r.qps, 1)} q/s, p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms`;

// In process: the service's table, the service's query terms, three sets of columns.
const COLUMNS: [string, string[]][] = [
  ["text", ["text"]],
  ["a hit's columns: hit, text", ["hit", "text"]],
  ["the six columns hit packs, with text", ["id", "char_start", "char_end", "text", "cite", "metadata"]],
];
const db = await connect(path.join(dataDir, "index"), { readConsistencyInterval: 0 });
const table = await db.openTable("chunks");
const terms = queries.map((q) => queryTerms(q).join(" "));
console.log(`kept table: ${fmt(await table.countRows())} rows; full-text searches in this process, k=10, ${CONCURRENCY} at once`);
for (let round = 1; round <= rounds; round++) {
  for (const [name, columns] of COLUMNS) {
    const search = async (i: number) =>
      (
        await table
          .query()
          .fullTextSearch(new MatchQuery(terms[i % terms.length]!, "text", { operator: Operator.Or }))
          .select([...columns, "_score"])
          .limit(10)
          .toArray()
      ).length;
    await pool(CONCURRENCY, 16, 0, search);
    console.log(`  round ${round}, ${name.padEnd(40)} ${rate(await pool(CONCURRENCY, queries.length, seconds, search))}`);
  }
}
table.close();
db.close();

// Over HTTP: CPU per call, per thread of the service (from /proc), and of this client.
const svc = await startService({ env: serviceEnv(), dataDir });
try {
  const pid = svc.proc.pid!;
  const threads = () => threadTicks(pid);
  const calls: [string, (i: number) => Promise<number>][] = [
    ["search", searchCall(svc, queries, undefined)],
    [`tag lookup (${TAG_TEXT}, limit 100)`, tagCall(svc)],
  ];
  console.log(`the service on it (pid ${pid}), over HTTP, ${CONCURRENCY} clients; CPU ms a call per thread (10 ms ticks)`);
  for (const [name, call] of calls) {
    await pool(CONCURRENCY, 16, 0, call);
    for (let round = 1; round <= rounds; round++) {
      const before = threads();
      const client = process.cpuUsage();
      const started = performance.now();
      const r = await pool(CONCURRENCY, queries.length, seconds, call);
      const made = r.qps * ((performance.now() - started) / 1000);
      const used = process.cpuUsage(client);
      const per = [...threads()]
        .map(([thread, t]) => [thread, ((t - (before.get(thread) ?? 0)) * 10) / made] as const)
        .filter(([, ms]) => ms >= 0.01)
        .map(([thread, ms]) => `${thread} ${fmt(ms, 2)}`);
      console.log(
        `  ${name}, round ${round}: ${rate(r)}; ${per.join(", ")}; this client ${fmt((used.user + used.system) / 1000 / made, 2)}`,
      );
    }
  }
} finally {
  await svc.stop();
}
