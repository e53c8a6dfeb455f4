import { startService } from "../test/harness.ts";
import { cannon, scifact, texts1k } from "./lib.ts";
const TOKEN = "bench-token-0123456789abcdef";
for (const worker of ["false", "true"]) {
  const svc = await startService({ env: { API_TOKENS: TOKEN, LOG_LEVEL: "warn", EMBEDDED_WORKER: worker } });
  let n = 0;
  const text1k = texts1k(scifact().corpus);
  const r = await cannon({ url: `${svc.url}/load_text_to_collection?collection_name=p`, method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    requests: [{ setupRequest: (req: any) => ({ ...req, body: JSON.stringify({ text: text1k(n++), metadata: { priority: 1 } }) }) }] });
  console.log("worker", worker, "rps", r.requests.average, "p99", r.latency.p99);
  await svc.stop();
}
