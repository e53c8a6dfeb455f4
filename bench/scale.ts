/**
 * `pnpm bench:scale`: docstore at N documents of about 1 KB (real SciFact sentences, ServiceNow-
 * like metadata), loaded over HTTP into one collection and searched by 8 concurrent clients,
 * each figure beside bare LanceDB in process (a child process of this one, so that its memory is
 * measured alone) on the same documents, measured in the same run.
 * Prints figures; asserts nothing.
 *   N=200000          documents (default 200,000)
 *   BENCH_ONLY=service|lancedb   one side only
 *   BENCH_SECONDS=10  least duration of each query set (each also runs the 300 queries once)
 *   KEEP=1            keep the service's DATA_DIR and the LanceDB table
 *   BENCH_NODE_ARGS   Node options for the service, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
 *   BENCH_SERVICE_LOG=FILE  the service's output written there at the end (with LOG_LEVEL=info:
 *                     its maintenance runs, rows and duration each)
 *   BENCH_INDEX=qdrant  the distributed mode on Qdrant, beside bare Qdrant (parts/scale-bare-qdrant.ts):
 *                     loaded with one worker process, then afresh with two and searched
 *                     (parts/scale-qdrant.ts; QDRANT_BIN, BENCH_BLOBS=fs), and bare Qdrant's query
 *                     sets once more through a Node.js pass-through (parts/pass-through.ts), the
 *                     most any Node.js service in front of Qdrant reaches; BENCH_ONLY=service
 *                     leaves bare Qdrant out
 * Every other variable (INDEX, QDRANT_URL, CHUNK_TOKENS, WORKER_CONCURRENCY...) reaches the
 * service as it is.
 */
// First: LanceDB's threads as the service sets them, before bare LanceDB's side loads it.
import "@docstore/shared/index/lancedb-env";
import { spawn } from "node:child_process";
import { fmt } from "./parts/lib.ts";
import { FILTER_TEXT, TAG_TEXT, MB, scaleOptions, type Rate, type SideFigures } from "./parts/scale-measure.ts";
import { serviceFigures, type ServiceFigures } from "./parts/scale-service.ts";
import { qdrantFigures, type DistributedFigures } from "./parts/scale-qdrant.ts";
import { bareQdrantFigures, type BareQdrantFigures } from "./parts/scale-bare-qdrant.ts";

const only = process.env.BENCH_ONLY;
const versusQdrant = process.env.BENCH_INDEX === "qdrant";
if (process.env.BENCH_INDEX !== undefined && !versusQdrant) throw new Error(`BENCH_INDEX: qdrant or unset, not ${process.env.BENCH_INDEX}`);
if (only !== undefined && only !== "service" && only !== "lancedb") throw new Error(`BENCH_ONLY: service or lancedb, not ${only}`);
const opts = scaleOptions(Number(process.env.BENCH_SECONDS ?? 10));
// Stopped by a signal: exit properly, so that the service it started is stopped too.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));

if (process.env.SCALE_CHILD === "lancedb") {
  // Imported here only, so that the native library is loaded in this child alone.
  const { lancedbFigures } = await import("./parts/scale-lancedb.ts");
  const figures = await lancedbFigures(opts);
  process.send!(figures, () => process.disconnect());
} else {
  console.log(
    `docstore scale bench: N=${fmt(opts.n)} documents of ~1 KB from ${fmt(opts.sentences.length)} SciFact sentences; Node ${process.version}; one run, same machine`,
  );
  console.log(
    `query sets, ${opts.queries.length} SciFact test queries, 8 at once, >= ${opts.seconds} s each: search k=10; search k=10 with "${FILTER_TEXT}"; tag lookup "${TAG_TEXT}" limit 100`,
  );
  const wall = performance.now();
  if (versusQdrant) {
    const bare = only === "service" ? undefined : await bareQdrantFigures(opts);
    const one = await qdrantFigures(opts, 1, false);
    const two = await qdrantFigures(opts, 2, true);
    reportQdrant(one, two, bare);
  } else {
    const ours: ServiceFigures | undefined = only === "lancedb" ? undefined : await serviceFigures(opts);
    const bare: SideFigures | undefined = only === "service" ? undefined : await lancedbInChild();
    report(ours, bare);
  }
  console.log(`wall time ${fmt((performance.now() - wall) / 1000, 0)} s`);
}

/** Bare LanceDB runs in a process of its own, so that its memory is its own. */
function lancedbInChild(): Promise<SideFigures> {
  const child = spawn(process.execPath, [import.meta.filename], {
    env: { ...process.env, SCALE_CHILD: "lancedb" },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  let figures: SideFigures | undefined;
  child.on("message", (m) => (figures = m as SideFigures));
  return new Promise((resolve, reject) => {
    child.once("exit", (code, signal) =>
      figures ? resolve(figures) : reject(new Error(`the LanceDB side exited with ${code ?? signal}`)),
    );
  });
}

function report(ours: ServiceFigures | undefined, bare: SideFigures | undefined) {
  const rows: [string, string, string, string, string][] = [["figure", "docstore", "bare LanceDB", "ratio", "target"]];
  const cell = (v: number | undefined, digits = 0) => (v === undefined ? "-" : fmt(v, digits));
  const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? "-" : fmt(a / b, 2));
  const rates = (label: string, pick: (s: SideFigures) => Rate, qpsTarget: string, p99Target = "") => {
    const a = ours && pick(ours);
    const b = bare && pick(bare);
    rows.push([`${label} q/s`, cell(a?.qps), cell(b?.qps), ratio(a?.qps, b?.qps), qpsTarget]);
    rows.push([`${label} p50 ms`, cell(a?.p50, 1), cell(b?.p50, 1), ratio(a?.p50, b?.p50), ""]);
    rows.push([`${label} p99 ms`, cell(a?.p99, 1), cell(b?.p99, 1), ratio(a?.p99, b?.p99), p99Target]);
    rows.push([`${label} hits/call`, cell(a?.hits, 1), cell(b?.hits, 1), "", ""]);
  };
  rows.push([
    "indexed docs/s (end to end)",
    cell(ours?.indexedPerSec),
    cell(bare?.indexedPerSec),
    ratio(ours?.indexedPerSec, bare?.indexedPerSec),
    ">= 6,000 docs/s",
  ]);
  rows.push(["  seconds to index all", cell(ours?.indexSeconds, 1), cell(bare?.indexSeconds, 1), "", ""]);
  rows.push(["accepted docs/s (202s)", cell(ours?.acceptedPerSec), "-", "", ""]);
  const first = (s: SideFigures | undefined) => (s ? `${fmt(s.first.p50, 0)} / ${fmt(s.first.p99, 0)}` : "-");
  rows.push([
    "first 16 searches after the load, p50 / max ms",
    first(ours),
    first(bare),
    ratio(ours?.first.p99, bare?.first.p99),
    "max <= 1,000 ms",
  ]);
  const during = ours?.during;
  rows.push([
    "searches while loading, p50 / p99 / max ms",
    during ? `${fmt(during.p50, 0)} / ${fmt(during.p99, 0)} / ${fmt(during.max ?? NaN, 0)}` : "-",
    "-",
    "",
    "p99 <= 500 ms",
  ]);
  rates("search", (s) => s.search, ">= 0.7 of bare", "<= 100 ms");
  const settled = ours?.searchSettled;
  rows.push([
    "  search q/s, again after the others",
    cell(settled?.qps),
    cell(bare?.search.qps),
    ratio(settled?.qps, bare?.search.qps),
    ">= 0.7 of bare",
  ]);
  rows.push([
    "  its p50 / p99 ms",
    settled ? `${fmt(settled.p50, 1)} / ${fmt(settled.p99, 1)}` : "-",
    bare ? `${fmt(bare.search.p50, 1)} / ${fmt(bare.search.p99, 1)}` : "-",
    "",
    "p99 <= 100 ms",
  ]);
  rates("filtered search", (s) => s.filtered, ">= 0.7 of bare");
  rates("tag lookup", (s) => s.tag, ">= 0.5 of bare");
  const mb = (v: number | undefined) => (v === undefined ? "-" : fmt(v / MB));
  rows.push(["peak RSS MB (sampled)", mb(ours?.peakRss), mb(bare?.peakRss), ratio(ours?.peakRss, bare?.peakRss), "<= 1,536 MB"]);
  rows.push(["VmHWM MB", mb(ours?.hwm), mb(bare?.hwm), ratio(ours?.hwm, bare?.hwm), "<= 1,536 MB"]);
  rows.push([
    ours ? `disk MB (maintenance settled, ${fmt(ours.settleSeconds)} s later)` : "disk MB",
    mb(ours?.disk),
    mb(bare?.disk),
    ratio(ours?.disk, bare?.disk),
    "",
  ]);
  rows.push(["  right after the query sets (WAL included)", mb(ours?.diskRunning), "-", "", ""]);
  rows.push(["raw text MB", mb(ours?.rawBytes ?? bare?.rawBytes), "", "", ""]);
  const raw = ours?.rawBytes ?? bare?.rawBytes;
  rows.push(["disk / raw text", cell(ours && ours.disk / raw!, 2), cell(bare && bare.disk / raw!, 2), "", "<= 3x"]);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  console.log(`\nN=${fmt(opts.n)}  (memory: docstore's service process; bare LanceDB's process, the bench's corpus generator included)`);
  for (const r of rows) console.log(r.map((v, c) => (c === 0 ? v.padEnd(widths[c]!) : v.padStart(widths[c]!))).join("  "));
}

/** The distributed mode with Qdrant beside the embedded service (LanceDB), the same documents. */
function reportQdrant(one: DistributedFigures, two: DistributedFigures, bare: BareQdrantFigures | undefined) {
  // The last two columns: the query sets through a Node.js pass-through in front of bare Qdrant,
  // and its rate over bare Qdrant's (parts/pass-through.ts): the most any Node.js service reaches.
  const rows: string[][] = [["figure", "docstore on Qdrant", "bare Qdrant", "ratio", "pass-through", "ratio"]];
  const cell = (v: number | undefined, digits = 0) => (v === undefined ? "-" : fmt(v, digits));
  const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? "-" : fmt(a / b, 2));
  rows.push([
    "indexed docs/s (end to end), one worker",
    cell(one.indexedPerSec),
    cell(bare?.indexedPerSec),
    ratio(one.indexedPerSec, bare?.indexedPerSec),
  ]);
  rows.push([
    "indexed docs/s (end to end), two workers",
    cell(two.indexedPerSec),
    cell(bare?.indexedPerSec),
    ratio(two.indexedPerSec, bare?.indexedPerSec),
  ]);
  rows.push(["  two workers / one", "", "", ratio(two.indexedPerSec, one.indexedPerSec)]);
  rows.push(["  accepted docs/s (202s), two workers", cell(two.acceptedPerSec), "", ""]);
  for (const [label, f] of [
    ["one worker", one],
    ["two workers", two],
  ] as const) {
    const c = f.cpuPerThousand;
    rows.push([
      `CPU s per 1,000 docs, ${label}: Qdrant / workers / API / Redis`,
      `${fmt(c.qdrant, 2)} / ${fmt(c.workers, 2)} / ${fmt(c.api, 2)} / ${fmt(c.redis, 2)}`,
      cell(bare?.cpuPerThousand, 2),
      "",
    ]);
  }
  const rates = (label: string, a: Rate | undefined, b: Rate | undefined, c?: Rate) => {
    const through = c ? [cell(c.qps), ratio(c.qps, b?.qps)] : ["", ""];
    rows.push([`${label} q/s`, cell(a?.qps), cell(b?.qps), ratio(a?.qps, b?.qps), ...through]);
    const latency = (r: Rate | undefined) => (r ? `${fmt(r.p50, 1)} / ${fmt(r.p99, 1)}` : "-");
    rows.push([`  p50 / p99 ms`, latency(a), latency(b), "", c ? latency(c) : "", ""]);
    rows.push([`  hits/call`, cell(a?.hits, 1), cell(b?.hits, 1), "", c ? cell(c.hits, 1) : "", ""]);
    const cpu = (r: Rate | undefined) =>
      r?.cpuMs ? ["qdrant", "api", "client"].map((p) => (r.cpuMs![p] === undefined ? "-" : fmt(r.cpuMs![p], 2))).join(" / ") : "-";
    if (a?.cpuMs || b?.cpuMs) rows.push([`  CPU ms per call: Qdrant / API / bench client`, cpu(a), cpu(b), "", c ? cpu(c) : "", ""]);
  };
  rates("first 16 searches after the load", two.sets?.first, undefined);
  rows.push(["Qdrant busy after the load (optimizer) s", cell(two.qdrantSettle), cell(bare?.settle), ""]);
  rates("search", two.sets?.search, bare?.search, bare?.passThrough?.search);
  rates("search again after the others", two.sets?.searchSettled, bare?.searchAgain);
  rates("filtered search", two.sets?.filtered, bare?.filtered, bare?.passThrough?.filtered);
  rates("tag lookup", two.sets?.tag, bare?.tag, bare?.passThrough?.tag);
  const mb = (v: number | undefined) => (v === undefined ? "-" : fmt(v / MB));
  rows.push(["Qdrant peak RSS MB", mb(two.qdrantPeakRss), mb(bare?.peakRss), ratio(two.qdrantPeakRss, bare?.peakRss)]);
  rows.push(["Qdrant storage MB", mb(two.qdrantDisk), mb(bare?.disk), ratio(two.qdrantDisk, bare?.disk)]);
  const columns = bare?.passThrough ? rows[0]!.length : 4;
  const table = rows.map((r) => Array.from({ length: columns }, (_, c) => r[c] ?? ""));
  const widths = table[0]!.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  console.log(
    `\nN=${fmt(opts.n)}  (docstore: API, BullMQ on Redis, worker processes; searched on the two-worker deployment; 8 concurrent clients)`,
  );
  for (const r of table)
    console.log(
      r
        .map((v, c) => (c === 0 ? v.padEnd(widths[c]!) : v.padStart(widths[c]!)))
        .join("  ")
        .trimEnd(),
    );
}
