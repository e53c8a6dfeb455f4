/** Measuring helpers of the scale benchmark: its client, a concurrency pool, memory of a process, disk. */
import { readFileSync, readdirSync } from "node:fs";
import http from "node:http";
import { execFileSync } from "node:child_process";
import { fmt, scifact } from "./lib.ts";
import { sentencesOf } from "./scale-corpus.ts";

export interface Rate {
  qps: number;
  p50: number;
  p99: number;
  /** Mean number of results per call (a sanity check that both sides answer alike). */
  hits: number;
  errors: number;
  /** Where known: the slowest call, and the number of calls. */
  max?: number;
  calls?: number;
  /** Where measured: CPU milliseconds per call of each process named (the load generator is `client`). */
  cpuMs?: Record<string, number>;
}

/**
 * The scale bench's client, for docstore and bare Qdrant alike: node:http on kept-alive
 * connections. `fetch` cost this process 1.5-1.6 ms of CPU a search against 0.65-1.0 ms through
 * docstore (the 200,000-document table, bench:kept), and 0.16-0.24 against 0.10-0.13 straight
 * to Qdrant (50,000 documents): on a machine of two cores, that share is taken from the service
 * measured, and bare LanceDB has no client at all.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One request; `body` is sent as JSON, a Buffer as it is (JSON made beforehand). Its JSON answer. */
export function requestJson(url: string, method: string, body?: unknown, headers: http.OutgoingHttpHeaders = {}): Promise<any> {
  const payload = body === undefined || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const sent =
    payload === undefined ? headers : { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(payload) };
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: sent }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (b: Buffer) => parts.push(b));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(parts).toString("utf8");
        if (res.statusCode! >= 300) reject(new Error(`${method} ${url.split("?")[0]}: HTTP ${res.statusCode} ${text.slice(0, 300)}`));
        else resolve(JSON.parse(text));
      });
    });
    req.on("error", reject);
    req.end(payload);
  });
}

/** CPU ticks (1/100 s) of a process so far, from /proc (0 for no pid). */
export type Ticks = (pid: number | undefined) => number;

/**
 * Runs a query set and adds the CPU milliseconds per call that each of `pids` and this process
 * (`client`, the load generator) spent while it ran.
 */
export async function withCpu(pids: Record<string, number | undefined>, ticks: Ticks, run: () => Promise<Rate>): Promise<Rate> {
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, ticks(pid)]));
  const client = process.cpuUsage();
  const rate = await run();
  const calls = rate.calls ?? 0;
  if (calls === 0) return rate;
  const cpuMs: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) if (pid) cpuMs[name] = ((ticks(pid) - before[name]!) * 10) / calls;
  const used = process.cpuUsage(client);
  cpuMs.client = (used.user + used.system) / 1000 / calls;
  return { ...rate, cpuMs };
}

/**
 * Waits until a process has been quiet (at most `quietTicks` CPU ticks, 1/100 s, a second) for
 * `quietSeconds` in a row, at most `maxSeconds`: after a load, Qdrant's optimizer goes on merging
 * and indexing segments, and its CPU would be counted against the searches measured meanwhile.
 * Returns the seconds it stayed busy (`maxSeconds` when it never went quiet).
 */
export async function quietAfter(ticks: () => number, { quietTicks = 5, quietSeconds = 3, maxSeconds = 180 } = {}): Promise<number> {
  const started = performance.now();
  let quietSince: number | null = null;
  let last = ticks();
  while ((performance.now() - started) / 1000 < maxSeconds) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = ticks();
    const t = performance.now();
    if (now - last <= quietTicks) quietSince ??= t - 1000;
    else quietSince = null;
    last = now;
    if (quietSince !== null && t - quietSince >= quietSeconds * 1000) return Math.max(0, quietSince - started) / 1000;
  }
  return maxSeconds;
}

/** The value at quantile `q` of ascending `sorted` values (NaN when there are none). */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/** Runs at least `minCalls` calls (and for at least `minSeconds`), `concurrency` at a time. */

export async function pool(concurrency: number, minCalls: number, minSeconds: number, call: (i: number) => Promise<number>): Promise<Rate> {
  const latencies: number[] = [];
  let next = 0;
  let hits = 0;
  let errors = 0;
  let firstError: unknown;
  const started = performance.now();
  const until = started + minSeconds * 1000;
  const worker = async () => {
    while (next < minCalls || performance.now() < until) {
      const i = next++;
      const t = performance.now();
      try {
        const got = await call(i); // not `hits += await ...`: that reads `hits` before awaiting
        hits += got;
      } catch (err) {
        errors++;
        firstError ??= err;
      }
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  if (errors > 0) console.warn(`  (warning: ${errors} of ${latencies.length} calls failed; the first: ${String(firstError)})`);
  latencies.sort((a, b) => a - b);
  return {
    qps: latencies.length / seconds,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    hits: hits / Math.max(1, latencies.length - errors),
    errors,
    calls: latencies.length,
  };
}

/** A field of /proc/<pid>/status in bytes (VmRSS, VmHWM); 0 when the process is gone. */
export function procBytes(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** CPU jiffies (utime + stime) in a /proc stat file of a process or thread; 0 once it is gone. */
export function statTicks(file: string): number {
  try {
    const stat = readFileSync(file, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

/** The CPU seconds of a process's threads, by name, most first (those under 0.1 s left out). */
export function threadSeconds(pid: number): string {
  const busy = [...threadTicks(pid)].filter(([, t]) => t >= 10).sort((a, b) => b[1] - a[1]);
  return busy.map(([name, t]) => `${name} ${fmt(t / 100, 1)}`).join(", ");
}

/** CPU jiffies a process's threads have used, summed by thread name (numbered names as one). */
export function threadTicks(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let name: string;
    try {
      name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8")
        .trim()
        .replace(/[-_ ]?\d+$/, "");
    } catch {
      continue; // the thread ended meanwhile
    }
    byName.set(name, (byName.get(name) ?? 0) + statTicks(`/proc/${pid}/task/${tid}/stat`));
  }
  return byName;
}

export interface RssSampler {
  /** What the process is doing now (set by the bench): the peak is reported with it. */
  phase: string;
  /** The phase in which the highest sample was taken. */
  readonly peakPhase: string;
  stop(): number;
}

/** Samples a process's RSS every 500 ms; `stop()` returns the highest sample. */
export function rssSampler(pid: number, phase = ""): RssSampler {
  let peak = 0;
  const sampler = {
    phase,
    peakPhase: phase,
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
  const sample = () => {
    const rss = procBytes(pid, "VmRSS");
    if (rss > peak) [peak, sampler.peakPhase] = [rss, sampler.phase];
  };
  sample();
  const timer = setInterval(sample, 500);
  timer.unref();
  return sampler;
}

/** Disk space a directory takes (allocated blocks, as `du` counts them). */
export function diskBytes(dir: string): number {
  let out: string;
  try {
    out = execFileSync("du", ["-s", "--block-size=1", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch (err) {
    // A file that maintenance removed while du walked the folder makes it fail; its total still counts the rest.
    out = String((err as { stdout?: unknown }).stdout ?? "");
    if (!/^\d+\s/.test(out)) throw err;
  }
  return Number(out.split(/\s/)[0]);
}

export const MB = 1024 * 1024;

/** What each side of the scale benchmark reports. */
export interface SideFigures {
  /** Documents loaded and searchable per second, from the first write to the last one indexed. */
  indexedPerSec: number;
  indexSeconds: number;
  /**
   * The first 16 searches once the last document is searchable, 8 at a time: cold caches on
   * both sides, and on docstore the rows still waiting for maintenance (scanned, not looked up).
   */
  first: Rate;
  /** Searches made while the load ran (docstore only: bare LanceDB's load has no searches beside it). */
  during?: Rate;
  search: Rate;
  filtered: Rate;
  tag: Rate;
  /** Largest RSS sampled, and the kernel's high-water mark at the end. */
  peakRss: number;
  hwm: number;
  disk: number;
  rawBytes: number;
}

/** The three query sets, as both sides ask them. */
export const FILTER_TEXT = "status=open^priority<=2";
export const TAG_TEXT = "status=open^priority=2^ORDERBYDESCcreated";
export const CONCURRENCY = 8;

/** What scale.ts read from the environment, handed to both sides. */
export interface ScaleOptions {
  n: number;
  sentences: string[];
  queries: string[];
  /** Each query set runs for at least this long (and at least one pass over the queries). */
  seconds: number;
  keep: boolean;
}

/** The options of bench:scale and bench:split, from N, KEEP and `seconds`; refuses an N that is not a positive integer. */
export function scaleOptions(seconds: number): ScaleOptions {
  const { corpus, tests } = scifact();
  const n = Number(process.env.N ?? 200_000);
  if (!Number.isInteger(n) || n < 1) throw new Error(`N: a positive integer, not ${process.env.N}`);
  return { n, sentences: sentencesOf(corpus), queries: tests.map((t) => t.text), seconds, keep: process.env.KEEP === "1" };
}
