/** A chunker thread (chunker.ts): chunks the documents of each message, and answers with their chunks or, for each that failed, why. */
import { parentPort, workerData } from "node:worker_threads";
import type { Section } from "../extract/types.ts";
import type { ChunkOptions } from "./chunk.ts";
import { chunkDocument } from "./document.ts";
import { toWire } from "../errors-wire.ts";

const { options } = workerData as { options: ChunkOptions };
const port = parentPort!;
port.on("message", ({ id, docs }: { id: number; docs: { text: string; sections: Section[] }[] }) => {
  const results = docs.map(({ text, sections }) => {
    try {
      return chunkDocument(text, sections, options);
    } catch (err) {
      return { error: toWire(err) };
    }
  });
  port.postMessage({ id, results });
});
