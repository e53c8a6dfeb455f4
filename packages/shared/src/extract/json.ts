/**
 * JSON and NDJSON rendered as readable `path: value` lines, which embed and match far better
 * than braces and quotes. Nested keys are joined with dots; arrays are flattened: scalars are
 * joined with ", ", and objects inside arrays become blocks separated by a blank line, so the
 * chunker keeps records together. Strings come out unescaped; null, "" and empty containers,
 * which carry no text, are left out.
 */
import { ExtractionError } from "../errors.ts";

export function renderJson(text: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ExtractionError(`malformed JSON: ${messageOf(error)}`);
  }
  return renderValue(value);
}

/** One block per record; a line that is not JSON fails the document with its line number. */
export function renderNdjson(text: string): string {
  const blocks: string[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new ExtractionError(`malformed NDJSON at line ${i + 1}: ${messageOf(error)}`);
    }
    const block = renderValue(value);
    if (block !== "") blocks.push(block);
  });
  return blocks.join("\n\n");
}

const BLOCK_BREAK = Symbol("block break");
type Frame = [path: string, value: unknown] | typeof BLOCK_BREAK;

/** Depth-first with an explicit stack: deeply nested input must not overflow the call stack. */
function renderValue(root: unknown): string {
  const lines: string[] = [];
  const stack: Frame[] = [["", root]];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame === BLOCK_BREAK) {
      if (lines.length > 0 && lines[lines.length - 1] !== "") lines.push("");
      continue;
    }
    const [path, value] = frame;
    if (Array.isArray(value)) {
      if (value.every(isScalar)) {
        const joined = value
          .map(scalarText)
          .filter((s) => s !== "")
          .join(", ");
        if (joined !== "") lines.push(line(path, joined));
        continue;
      }
      for (let i = value.length - 1; i >= 0; i--) {
        stack.push([path, value[i]]);
        if (i > 0) stack.push(BLOCK_BREAK);
      }
    } else if (value !== null && typeof value === "object") {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        stack.push([path === "" ? key : `${path}.${key}`, child]);
      }
    } else {
      const text = scalarText(value);
      if (text !== "") lines.push(line(path, text));
    }
  }
  while (lines[lines.length - 1] === "") lines.pop();
  return lines.join("\n");
}

function isScalar(value: unknown): boolean {
  return value === null || typeof value !== "object";
}

function scalarText(value: unknown): string {
  return value === null || value === undefined ? "" : String(value);
}

function line(path: string, text: string): string {
  return path === "" ? text : `${path}: ${text}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
