/**
 * Chunking beside the worker's own thread. Counting tokens is most of what a worker's JavaScript
 * does with a plain-text document, and the worker's thread also claims, reads, builds the index's
 * rows and commits them: on threads of their own, documents are chunked while that goes on.
 *
 * The calls made in one turn of the event loop (a batch's documents) go to the threads as one
 * message each. A thread that dies fails the calls it held (a failed batch is tried again, as
 * after any other failure) and the next call starts a new one. Threads start on the first call.
 */
import { Worker } from "node:worker_threads";
import type { Section } from "../extract/types.ts";
import type { ChunkOptions } from "./chunk.ts";
import { chunkDocument, type DocumentChunk } from "./document.ts";
import { fromWire, type WireError } from "../errors-wire.ts";

export interface Chunker {
  /** The chunks of an extracted text (chunkDocument). */
  chunk(text: string, sections: readonly Section[]): Promise<DocumentChunk[]>;
  /** Stops the threads; calls not yet answered fail. */
  close(): Promise<void>;
}

/** A chunker on `threads` threads of its own, or on the caller's thread for 0. */
export function createChunker(options: ChunkOptions, threads: number): Chunker {
  if (threads === 0) {
    return { chunk: async (text, sections) => chunkDocument(text, sections, options), close: async () => {} };
  }
  return new ThreadChunker(options, threads);
}

interface Call {
  text: string;
  sections: readonly Section[];
  resolve(chunks: DocumentChunk[]): void;
  reject(err: Error): void;
}

class ThreadChunker implements Chunker {
  readonly #options: ChunkOptions;
  readonly #threads: (ChunkerThread | null)[];
  #outbox: Call[] = [];
  #closed = false;

  constructor(options: ChunkOptions, threads: number) {
    this.#options = options;
    this.#threads = new Array<ChunkerThread | null>(threads).fill(null);
  }

  chunk(text: string, sections: readonly Section[]): Promise<DocumentChunk[]> {
    if (this.#closed) return Promise.reject(new Error("the chunker is closed"));
    return new Promise((resolve, reject) => {
      if (this.#outbox.push({ text, sections, resolve, reject }) === 1) queueMicrotask(() => this.#flush());
    });
  }

  /** Sends what was asked in this turn, in as many equal parts as there are threads. */
  #flush(): void {
    const calls = this.#outbox;
    this.#outbox = [];
    if (this.#closed) {
      for (const c of calls) c.reject(new Error("the chunker is closed"));
      return;
    }
    const share = Math.ceil(calls.length / this.#threads.length);
    for (let i = 0; i * share < calls.length; i++) this.#thread(i).send(calls.slice(i * share, (i + 1) * share));
  }

  #thread(i: number): ChunkerThread {
    let thread = this.#threads[i];
    if (!thread) {
      thread = new ChunkerThread(this.#options, () => {
        if (this.#threads[i] === thread) this.#threads[i] = null;
      });
      this.#threads[i] = thread;
    }
    return thread;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#threads.map((t) => t?.stop()));
  }
}

type Reply = { id: number; results: (DocumentChunk[] | { error: WireError })[] };

class ChunkerThread {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Call[]>();
  readonly #dead: () => void;
  #sent = 0;

  constructor(options: ChunkOptions, dead: () => void) {
    this.#dead = dead;
    this.#worker = new Worker(new URL("./chunker-thread.ts", import.meta.url), { workerData: { options } });
    this.#worker.unref(); // only while it holds calls does it keep the process alive
    this.#worker.on("message", ({ id, results }: Reply) => {
      const calls = this.#pending.get(id) ?? [];
      this.#pending.delete(id);
      if (this.#pending.size === 0) this.#worker.unref();
      calls.forEach((call, i) => {
        const result = results[i]!;
        // The error chunkDocument threw, of the same class as without a thread.
        if ("error" in result) call.reject(fromWire(result.error));
        else call.resolve(result);
      });
    });
    this.#worker.on("error", (err) => this.#fail(new Error(`a chunker thread failed: ${err.message}`, { cause: err })));
    this.#worker.on("exit", (code) => this.#fail(new Error(`a chunker thread exited (code ${code})`)));
  }

  send(calls: Call[]): void {
    const id = ++this.#sent;
    if (this.#pending.size === 0) this.#worker.ref();
    this.#pending.set(id, calls);
    this.#worker.postMessage({ id, docs: calls.map(({ text, sections }) => ({ text, sections })) });
  }

  /** Fails what it held; the next call starts a new thread. */
  #fail(err: Error): void {
    this.#dead();
    for (const calls of this.#pending.values()) for (const call of calls) call.reject(err);
    this.#pending.clear();
  }

  async stop(): Promise<void> {
    await this.#worker.terminate();
  }
}
