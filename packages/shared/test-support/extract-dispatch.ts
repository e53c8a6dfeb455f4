/**
 * A dispatcher for sandbox tests only: what it does depends on the document's text, so a test
 * can make a worker hang, crash, exit or run out of memory without a special content type in
 * the real dispatcher.
 */
import { threadId } from "node:worker_threads";
import { joinSections, type Extracted, type ExtractionLimits } from "../src/extract/types.ts";
import { ExtractionError } from "../src/errors.ts";

export async function extract(bytes: Uint8Array, type: string, limits: ExtractionLimits): Promise<Extracted> {
  const command = new TextDecoder().decode(bytes);
  switch (command) {
    case "hang": // a busy loop: only terminating the thread stops it
      for (;;);
    case "hang-async":
      return new Promise<never>(() => {});
    case "crash": // an exception nobody catches, thrown outside the extraction's promise
      setImmediate(() => {
        throw new Error("boom");
      });
      return new Promise<never>(() => {});
    case "exit":
      return process.exit(3);
    case "oom": {
      const hoard: number[][] = [];
      for (;;) hoard.push(Array.from({ length: 1024 }, (_, i) => i * Math.random()));
    }
    case "reject":
      throw new ExtractionError("unreadable test document");
    case "bug":
      throw new TypeError("extractor bug");
    case "whoami": // which worker thread ran the document, and with which limits
      return joinSections([{ text: `thread ${threadId} max ${limits.maxEntries}`, at: {} }]);
    default:
      if (command.startsWith("sleep ")) await new Promise((resolve) => setTimeout(resolve, Number(command.slice(6))));
      return joinSections([{ text: `${type}: ${command}`, at: {} }]);
  }
}
