/**
 * One sandbox worker thread: imports the dispatcher module named in `workerData` and extracts
 * the documents sandbox.ts sends it, one at a time. Timeouts, crashes and memory limits are
 * sandbox.ts's business: this side only answers each request.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { ExtractorModule, WorkerData, WorkerReply, WorkerRequest } from "./sandbox.ts";
import { toWire } from "../errors-wire.ts";

if (!parentPort) throw new Error("sandbox-worker.ts runs as a worker thread only");
const port = parentPort;
const data = workerData as WorkerData;

const dispatcher = import(data.module) as Promise<ExtractorModule>;
dispatcher.catch(() => {}); // a module that fails to load is reported with each document instead

port.on("message", async (request: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    const { extract } = await dispatcher;
    reply = { id: request.id, ok: true, result: await extract(request.bytes, request.type, data.limits) };
  } catch (error) {
    reply = { id: request.id, ok: false, error: toWire(error) };
  }
  try {
    port.postMessage(reply);
  } catch (error) {
    // A result that cannot be cloned is a bug in the extractor.
    port.postMessage({ id: request.id, ok: false, error: toWire(error) } satisfies WorkerReply);
  }
});
