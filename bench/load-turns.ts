/**
 * `pnpm bench:turns`: `/load_text_to_collection` throughput of several checkouts taking turns,
 * for a comparison that a noisy machine does not swamp. `pnpm bench`'s load ratio of one commit
 * ranged 0.13-0.31 within an hour here, as the machine's speed changed between its echo and its
 * load; short bursts against each checkout in turn, paired by round, change together instead.
 * Every checkout's embedded service runs at once (each its own `packages/api/src/main.ts`, with
 * the environment the test harness gives it, in a fresh DATA_DIR); before
 * each burst, each of them has nothing pending and has used almost no CPU for a second, so that
 * no burst runs beside another's indexing or index maintenance. Prints each burst's requests/s and
 * the API thread's CPU a request, then the median of each checkout's ratios to the first one's
 * bursts of the same round. Prints figures; asserts nothing.
 *   CHECKOUTS        checkouts to compare, comma-separated, dependencies installed (default: this one,
 *                    twice, which shows the noise itself); the first is the reference. An entry may
 *                    name Node options after the path (`.,. --max-semi-space-size=32`) to compare those
 *   ROUNDS=8         rounds, after one of warm-up; the order of the checkouts alternates
 *   BENCH_SECONDS=3  length of each burst (50 connections, as `pnpm bench`)
 *   THREADS=1        also print, for each burst, the cores each group of the service's threads
 *                    (by name: MainThread, WorkerThread, V8Worker, lance-cpu...) and the client used
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cannon, fmt, scifact, texts1k } from "./parts/lib.ts";
import { threadTicks } from "./parts/scale-measure.ts";

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const checkouts = (process.env.CHECKOUTS ?? `${HERE},${HERE}`).split(",").map((entry) => {
  const [dir = ".", ...nodeArgs] = entry.trim().split(/\s+/);
  return { dir: path.resolve(dir), nodeArgs };
});
const rounds = Number(process.env.ROUNDS ?? 8);
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const TOKEN = "bench-token-0123456789abcdef";
const text1k = texts1k(scifact().corpus);

interface Service {
  url: string;
  proc: ChildProcess;
  dataDir: string;
}

/**
 * A checkout's service, started as the test harness starts it (not through the harness: two
 * checkouts' test support would load two copies of vitest into this process).
 */
async function start({ dir: checkout, nodeArgs }: (typeof checkouts)[number]): Promise<Service> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "docstore-turns-"));
  const env = {
    PATH: process.env.PATH ?? "",
    TMPDIR: tmpdir(),
    PORT: "0",
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    API_TOKENS: TOKEN,
    MALLOC_ARENA_MAX: "2",
    MALLOC_MMAP_THRESHOLD_: "4194304",
  };
  const proc = spawn(process.execPath, [...nodeArgs, path.join(checkout, "packages/api/src/main.ts")], {
    cwd: checkout,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let timer: NodeJS.Timeout | undefined;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      // As the harness: on a busy 2-core machine, loading the native modules alone can take 20 s.
      timer = setTimeout(() => reject(new Error(`${checkout}: the service was not ready in 45 s:\n${output}`)), 45_000);
      const seen = (chunk: Buffer) => {
        output += chunk.toString();
        const m = /docstore ready at (\S+)/.exec(output);
        if (m) resolve(m[1]!);
      };
      proc.stdout.on("data", seen);
      proc.stderr.on("data", seen);
      proc.once("exit", (code) => reject(new Error(`${checkout}: the service exited with ${code}:\n${output}`)));
      proc.once("error", (err) => reject(new Error(`${checkout}: the service did not start: ${err.message}`)));
    });
    return { url, proc, dataDir };
  } catch (err) {
    // Not among the services stopped at the end: stopped here, its folder removed.
    await stop({ url: "", proc, dataDir });
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

async function stop(svc: Service) {
  if (svc.proc.pid !== undefined && svc.proc.exitCode === null && svc.proc.signalCode === null) {
    svc.proc.kill("SIGTERM");
    await new Promise((res) => svc.proc.once("exit", res));
  }
  rmSync(svc.dataDir, { recursive: true, force: true });
}

async function pending(svc: Service): Promise<number> {
  const res = await fetch(`${svc.url}/get_list_of_collection`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const body = (await res.json()) as { collections: { pending: number }[] };
  return body.collections.reduce((n, c) => n + c.pending, 0);
}

/** Nothing pending, then less than 8% of a core used over a second. */
async function quiet(svc: Service) {
  while ((await pending(svc)) > 0) await new Promise((res) => setTimeout(res, 200));
  const busy = () => [...threadTicks(svc.proc.pid!).values()].reduce((a, b) => a + b, 0);
  for (;;) {
    const before = busy();
    await new Promise((res) => setTimeout(res, 1000));
    if (busy() - before < 8) return;
  }
}

let n = 0;
/**
 * One burst: requests/s, the API thread's CPU µs per request, and the cores each group of the
 * service's threads (by name) and this process (the client) used meanwhile.
 */
async function burst(svc: Service): Promise<{ rps: number; apiUs: number; cores: string }> {
  const before = threadTicks(svc.proc.pid!);
  const client = process.cpuUsage();
  const t0 = performance.now();
  const result = await cannon({
    url: `${svc.url}/load_text_to_collection?collection_name=turns`,
    method: "POST",
    duration: seconds,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    requests: [
      { setupRequest: (req) => ({ ...req, body: JSON.stringify({ text: text1k(n++), metadata: { status: "open", priority: n % 5 } }) }) },
    ],
  });
  const wall = (performance.now() - t0) / 1000;
  const after = threadTicks(svc.proc.pid!);
  const used = [...after]
    .map(([name, ticks]) => [name, (ticks - (before.get(name) ?? 0)) / 100 / wall] as const)
    .filter(([, c]) => c >= 0.02);
  used.sort((a, b) => b[1] - a[1]);
  const own = process.cpuUsage(client);
  used.push(["client", (own.user + own.system) / 1e6 / wall]);
  const apiUs = (((after.get("MainThread") ?? 0) - (before.get("MainThread") ?? 0)) * 10_000) / Math.max(1, result.requests.total);
  return { rps: result.requests.average, apiUs, cores: used.map(([name, c]) => `${name} ${fmt(c, 2)}`).join(", ") };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  console.log(`load bursts of ${seconds} s taking turns, ${rounds} rounds (Node ${process.version}):`);
  checkouts.forEach((c, i) => console.log(`  ${i}: ${[c.dir, ...c.nodeArgs].join(" ")}`));
  const services: Service[] = [];
  try {
    for (const checkout of checkouts) services.push(await start(checkout));
    const rates: number[][] = checkouts.map(() => []);
    for (let round = 0; round <= rounds; round++) {
      const order = round % 2 === 0 ? services.map((_, i) => i) : services.map((_, i) => services.length - 1 - i);
      const line: string[] = [];
      for (const i of order) {
        for (const s of services) await quiet(s);
        const { rps, apiUs, cores } = await burst(services[i]!);
        line[i] = `${i}: ${fmt(rps)} req/s, API ${fmt(apiUs)} µs/req`;
        if (process.env.THREADS) console.log(`  ${i} cores: ${cores}`);
        if (round > 0) rates[i]!.push(rps);
      }
      console.log(`${round === 0 ? "warm-up" : `round ${round}`}  ${line.join("  ")}`);
    }
    for (let i = 0; i < checkouts.length; i++) {
      const ratios = rates[i]!.map((r, k) => r / rates[0]![k]!);
      console.log(
        `${i}: median ${fmt(median(rates[i]!))} req/s; to 0, by round: median ${fmt(median(ratios), 2)} (${fmt(Math.min(...ratios), 2)}-${fmt(Math.max(...ratios), 2)})`,
      );
    }
  } finally {
    for (const s of services) await stop(s);
  }
}

await main();
