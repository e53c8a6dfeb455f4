/**
 * `pnpm bench:split`: the two halves of bench:scale's load, measured apart. The same N documents
 * are sent to the embedded service with its worker thread off (EMBEDDED_WORKER=false): how fast
 * the API thread accepts them with the machine to itself. Then the service starts again on that
 * DATA_DIR with its worker: how fast the worker indexes the queue with the machine to itself.
 * Each with the CPU seconds of the service's threads (from /proc). bench:scale runs both at once
 * on the same cores; its end-to-end rate against these two says how well they share them.
 * Prints figures; asserts nothing.
 *   N=200000          documents (default 200,000)
 *   KEEP=1            keep the DATA_DIR
 *   BENCH_NODE_ARGS   Node options for the service, as in bench:scale
 */
import { removeDir, startService, tempDataDir, type Service } from "../test/harness.ts";
import { fmt } from "./parts/lib.ts";
import { scaleOptions, threadSeconds } from "./parts/scale-measure.ts";
import { requestBodies, send, serviceEnv, settled, type Sending } from "./parts/scale-service.ts";

const opts = scaleOptions(0);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));

const cpuByThread = (svc: Service) => threadSeconds(svc.proc.pid!);

console.log(`docstore split bench: N=${fmt(opts.n)} documents of ~1 KB as in bench:scale; Node ${process.version}; one run`);
const dataDir = tempDataDir();
const bodies = requestBodies(opts);
const sending: Sending = { sent: 0, accepted: 0 };
try {
  const api = await startService({ dataDir, env: { ...serviceEnv(), EMBEDDED_WORKER: "false" } });
  const started = performance.now();
  await send(api, bodies, sending);
  const acceptSeconds = (performance.now() - started) / 1000;
  console.log(
    `accepted alone: ${fmt(sending.accepted)} in ${fmt(acceptSeconds, 1)} s, ${fmt(sending.accepted / acceptSeconds)} docs/s; CPU s by thread: ${cpuByThread(api)}`,
  );
  await api.stop();

  const service = await startService({ dataDir, env: serviceEnv() });
  const begun = performance.now();
  const counts = await settled(service, sending.accepted);
  const indexSeconds = (performance.now() - begun) / 1000;
  console.log(
    `indexed alone: ${fmt(counts.ready)} ready, ${fmt(counts.failed)} failed in ${fmt(indexSeconds, 1)} s, ${fmt(counts.ready / indexSeconds)} docs/s; CPU s by thread: ${cpuByThread(service)}`,
  );
  await service.stop();
  console.log(`one after the other: ${fmt(sending.accepted / (acceptSeconds + indexSeconds))} docs/s end to end`);
} finally {
  if (opts.keep) console.log(`kept DATA_DIR ${dataDir}`);
  else removeDir(dataDir);
}
