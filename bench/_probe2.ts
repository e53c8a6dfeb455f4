import { spawn } from "node:child_process";
import { cannon, scifact, texts1k } from "./lib.ts";
const text1k = texts1k(scifact().corpus);
const TOKEN = "bench-token-0123456789abcdef";
const proc = spawn(process.execPath, ["--cpu-prof", "--cpu-prof-dir=/tmp/prof", "packages/api/src/main.ts"], { env: { ...process.env, PORT: "18555", DATA_DIR: "/tmp/prof/data", API_TOKENS: TOKEN, LOG_LEVEL: "warn", EMBEDDED_WORKER: "true" }, stdio: ["ignore", "pipe", "inherit"] });
await new Promise((r) => proc.stdout.once("data", r));
let n = 0;
const r = await cannon({ url: `http://127.0.0.1:18555/load_text_to_collection?collection_name=p`, method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
  requests: [{ setupRequest: (req: any) => ({ ...req, body: JSON.stringify({ text: text1k(n++), metadata: { priority: 1 } }) }) }] });
console.log("rps", r.requests.average);
proc.kill("SIGINT");
await new Promise((r) => proc.once("exit", r));
