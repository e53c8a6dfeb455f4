import { readFileSync, readdirSync } from "node:fs";
import { startService } from "../test/harness.ts";
import { cannon, scifact, texts1k } from "./lib.ts";
const TOKEN = "bench-token-0123456789abcdef";
const text1k = texts1k(scifact().corpus);
function cpu(pid: number) {
  const out: Record<string, number> = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    out[`${name}`] = (out[name] ?? 0) + Number(f[11]) + Number(f[12]);
  }
  return out;
}
const svc = await startService({ env: { API_TOKENS: TOKEN, LOG_LEVEL: "warn", EMBEDDED_WORKER: process.env.W ?? "true" } });
const before = cpu(svc.proc.pid!);
const selfBefore = process.cpuUsage();
let n = 0;
const r = await cannon({ url: `${svc.url}/load_text_to_collection?collection_name=p`, method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
  requests: [{ setupRequest: (req: any) => ({ ...req, body: JSON.stringify({ text: text1k(n++), metadata: { priority: 1 } }) }) }] });
const after = cpu(svc.proc.pid!);
const self = process.cpuUsage(selfBefore);
console.log("rps", r.requests.average, "main-thread CPU µs/request", (((after["MainThread"]! - before["MainThread"]!) * 10000) / r.requests.total).toFixed(1));
for (const k of Object.keys(after)) console.log(k, ((after[k]! - (before[k] ?? 0)) / 100 / 10 * 100).toFixed(0) + "% of a core");
console.log("autocannon process", ((self.user + self.system) / 1e6 / 10 * 100).toFixed(0) + "%");
await svc.stop();
