import { spawn } from "node:child_process";
import { cannon, scifact, texts1k } from "./lib.ts";
const TOKEN = "bench-token-0123456789abcdef";
const text1k = texts1k(scifact().corpus);
const proc = spawn(process.execPath, ["--cpu-prof", "--cpu-prof-dir=/tmp/prof", "packages/api/src/main.ts"], { env: { ...process.env, PORT: "18556", DATA_DIR: "/tmp/prof/data", API_TOKENS: TOKEN, LOG_LEVEL: "warn" }, stdio: ["ignore", "pipe", "inherit"] });
await new Promise((r) => proc.stdout.once("data", r));
let n = 0;
const t0 = performance.now();
await cannon({ url: `http://127.0.0.1:18556/load_text_to_collection?collection_name=p`, method: "POST", amount: 15000, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
  requests: [{ setupRequest: (req: any) => ({ ...req, body: JSON.stringify({ text: text1k(n++), metadata: { priority: 1 } }) }) }] });
console.log("loaded", (performance.now() - t0) / 1000);
for (;;) {
  const r = await (await fetch("http://127.0.0.1:18556/get_list_of_collection", { headers: { authorization: `Bearer ${TOKEN}` } })).json();
  if ((r as any).collections[0].ready >= 15000) break;
  await new Promise((r) => setTimeout(r, 200));
}
console.log("indexed", (performance.now() - t0) / 1000);
proc.kill("SIGINT");
await new Promise((r) => proc.once("exit", r));
