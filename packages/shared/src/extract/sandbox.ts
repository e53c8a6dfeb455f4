/**
 * Extraction isolated from the service: documents run in a small pool of worker threads, each
 * with a heap limit, one document per worker at a time and a time limit per document. A
 * document that hangs, crashes its worker or exhausts its heap fails alone, with an
 * ExtractionError; its worker is thrown away and the next document gets a fresh one.
 * Workers start when a document needs one and are reused until they die.
 */
import { isMarkedAsUntransferable, Worker } from "node:worker_threads";
import { DEFAULT_LIMITS, type Extracted, type ExtractionLimits } from "./types.ts";
import { ExtractionError } from "../errors.ts";
import { fromWire, type WireError } from "../errors-wire.ts";

export interface SandboxOptions {
  /** Longest a document may take, counted from when a worker starts on it (not while queued). */
  timeoutMs: number;
  /** Heap limit of each worker. Default 512. */
  maxOldGenerationSizeMb?: number;
  /** The dispatcher module the workers import, shaped like dispatch.ts (an `ExtractorModule`). */
  module: URL;
  /** Most workers (documents extracted at once). Default 1. */
  size?: number;
  limits?: ExtractionLimits;
}

export interface ExtractionSandbox {
  /**
   * Extracts one document. Its bytes are transferred to the worker, not copied, when they fill
   * their own ArrayBuffer: the caller's `bytes` are then empty (detached) afterwards.
   */
  extract(bytes: Uint8Array, type: string): Promise<Extracted>;
  /** Fails queued and running documents and stops every worker. */
  close(): Promise<void>;
}

/** What a dispatcher module exports. */
export interface ExtractorModule {
  extract(bytes: Uint8Array, type: string, limits: ExtractionLimits): Promise<Extracted> | Extracted;
}

// The protocol between this module and sandbox-worker.ts.
export interface WorkerData {
  module: string;
  limits: ExtractionLimits;
}
export interface WorkerRequest {
  id: number;
  bytes: Uint8Array;
  type: string;
}
export type WorkerReply = { id: number; ok: true; result: Extracted } | { id: number; ok: false; error: WireError };

interface Job {
  id: number;
  bytes: Uint8Array;
  type: string;
  resolve(result: Extracted): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  job?: Job | undefined;
  timer?: NodeJS.Timeout | undefined;
}

const WORKER_SCRIPT = new URL("./sandbox-worker.ts", import.meta.url);
/** The service's dispatcher, for `SandboxOptions.module`. */
export const DISPATCH_MODULE = new URL("./dispatch.ts", import.meta.url);

export function createExtractionSandbox(options: SandboxOptions): ExtractionSandbox {
  const size = Math.max(1, options.size ?? 1);
  const workerData: WorkerData = { module: options.module.href, limits: options.limits ?? DEFAULT_LIMITS };
  const queue: Job[] = [];
  const slots = new Set<Slot>(); // live workers only
  const stopping = new Set<Promise<void>>();
  let nextId = 1;
  let closed = false;

  function pump(): void {
    while (queue.length > 0 && !closed) {
      const slot = [...slots].find((s) => s.job === undefined) ?? (slots.size < size ? spawn() : undefined);
      if (!slot) return;
      start(slot, queue.shift()!);
    }
  }

  function spawn(): Slot {
    const worker = new Worker(WORKER_SCRIPT, {
      workerData,
      // A small young generation: pdf.js allocates briskly, and V8 would otherwise reserve
      // some 128 MB for short-lived objects on a large machine.
      resourceLimits: { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb ?? 512, maxYoungGenerationSizeMb: 32 },
    });
    worker.unref(); // an idle pool must not keep the process alive; a running job's timer does
    const slot: Slot = { worker };
    slots.add(slot);
    worker.on("message", (reply: WorkerReply) => finish(slot, reply));
    worker.on("error", (error) => retire(slot, new ExtractionError(`extractor crashed: ${error.message}`, { cause: error })));
    worker.on("exit", (code) => retire(slot, new ExtractionError(`extractor crashed: worker exited with code ${code}`)));
    return slot;
  }

  function start(slot: Slot, job: Job): void {
    slot.job = job;
    slot.timer = setTimeout(() => {
      retire(slot, new ExtractionError(`extraction timed out after ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    const { bytes, transfer } = transferable(job.bytes);
    try {
      slot.worker.postMessage({ id: job.id, bytes, type: job.type } satisfies WorkerRequest, transfer);
    } catch {
      // Some buffers cannot be moved though nothing marks them (zlib's output, allocated
      // natively, for one): send a copy, which always can.
      const copy = new Uint8Array(job.bytes); // a copy (a Buffer's slice() would be a view)
      slot.worker.postMessage({ id: job.id, bytes: copy, type: job.type } satisfies WorkerRequest, [copy.buffer]);
    }
  }

  function finish(slot: Slot, reply: WorkerReply): void {
    const job = slot.job;
    if (!slots.has(slot) || job?.id !== reply.id) return; // a late reply from a retired worker
    clearTimeout(slot.timer);
    slot.job = undefined;
    if (reply.ok) job.resolve(reply.result);
    else job.reject(fromWire(reply.error)); // of its class, with the stack of where it was thrown
    pump();
  }

  /** Stops a worker that timed out, crashed or exited, and fails its document (first cause wins). */
  function retire(slot: Slot, error: Error): void {
    if (!slots.delete(slot)) return;
    clearTimeout(slot.timer);
    slot.job?.reject(error);
    slot.job = undefined;
    const stopped: Promise<void> = slot.worker.terminate().then(
      () => void stopping.delete(stopped),
      () => void stopping.delete(stopped),
    );
    stopping.add(stopped);
    pump();
  }

  return {
    extract(bytes, type) {
      if (closed) return Promise.reject(new Error("extraction sandbox is closed"));
      return new Promise<Extracted>((resolve, reject) => {
        queue.push({ id: nextId++, bytes, type, resolve, reject });
        pump();
      });
    },
    async close() {
      closed = true;
      const error = new Error("extraction sandbox is closed");
      for (const job of queue.splice(0)) job.reject(error);
      for (const slot of [...slots]) retire(slot, error);
      await Promise.allSettled([...stopping]);
    },
  };
}

/** Bytes that fill their own ArrayBuffer move to the worker; others are copied once, then moved. */
function transferable(bytes: Uint8Array): { bytes: Uint8Array; transfer: ArrayBuffer[] } {
  const buffer = bytes.buffer;
  const whole = bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength;
  if (buffer instanceof ArrayBuffer && whole && !isMarkedAsUntransferable(buffer)) return { bytes, transfer: [buffer] };
  const copy = new Uint8Array(bytes); // a copy (a Buffer's slice() would be a view)
  return { bytes: copy, transfer: [copy.buffer] };
}
