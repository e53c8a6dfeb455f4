/**
 * The least any Node.js service in front of Qdrant does per request, as a process of its own
 * (bench:scale's "pass-through" column): node:http in; the request's body sent on to Qdrant on
 * kept-alive connections (node:http, as docstore's transport does); Qdrant's answer read whole,
 * parsed, and its points written back as JSON (as `{ result: { points } }`). No routing, validation, logging, catalog or
 * mapping: what docstore spends beyond this on a request is its own, what this spends is the
 * platform's. `node bench/parts/pass-through.ts <qdrant url>` prints the port it listens on.
 */
import http from "node:http";

const target = new URL(process.argv[2] ?? "");
const agent = new http.Agent({ keepAlive: true, maxSockets: 25 });

function read(stream: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    stream.on("data", (part: Buffer) => parts.push(part));
    stream.on("end", () => resolve(Buffer.concat(parts)));
    stream.on("error", reject);
  });
}

function forward(method: string, path: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path,
        method,
        agent,
        headers: { "content-type": "application/json", "content-length": String(body.length) },
      },
      (res) => {
        read(res).then((bytes) => resolve({ status: res.statusCode ?? 502, text: bytes.toString("utf8") }), reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const server = http.createServer(async (req, res) => {
  try {
    const answer = await forward(req.method ?? "POST", req.url ?? "/", await read(req));
    const parsed = JSON.parse(answer.text) as { result?: { points?: unknown[] } };
    res.writeHead(answer.status, { "content-type": "application/json" });
    res.end(JSON.stringify({ result: { points: parsed.result?.points ?? [] } }));
  } catch (err) {
    res.writeHead(502, { "content-type": "text/plain" });
    res.end(String(err));
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") process.stdout.write(`${address.port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
