/**
 * The scale benchmark's corpus: N documents of about 1 KB made of real SciFact sentences, with
 * ServiceNow-like metadata, generated on the fly in batches so that a million of them never sit
 * in memory at once. The same N always gives the same documents.
 */
import type { Doc } from "./lib.ts";

export interface ScaleDoc {
  id: string;
  text: string;
  status: "open" | "closed" | "pending";
  priority: number;
  /** `YYYY-MM-DDThh:mm:ssZ`, spread over 2024. */
  created: string;
  createdMs: number;
  type: string;
}

const STATUSES = ["open", "closed", "pending"] as const;
const TYPES = ["incident", "problem", "change_request", "knowledge", "task"];
const YEAR_START = Date.UTC(2024, 0, 1);
const YEAR_SECONDS = 366 * 24 * 3600;
/** Sentences are appended until a document reaches this many characters. */
const TARGET_CHARS = 1000;

/** A well-mixed 32-bit hash of a document number (so status, priority and date are independent). */
function hash(n: number, salt: number): number {
  let h = Math.imul(n ^ salt, 0x9e3779b1);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export function sentencesOf(corpus: Doc[]): string[] {
  const out: string[] = [];
  for (const d of corpus) {
    for (const s of d.text.split(/(?<=[.!?])\s+(?=[A-Z0-9([])/)) {
      const t = s.trim();
      if (t.length >= 20) out.push(t);
    }
  }
  return out;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * Sentence order of each pass over the corpus: pass 0 reads the sentences in order (whole
 * abstracts); later passes step through them with a stride coprime to their count, so that
 * every pass visits every sentence once and documents of different passes differ.
 */
function strideOf(pass: number, count: number): number {
  if (pass === 0) return 1;
  let stride = 7919 * pass + 1;
  while (gcd(stride % count, count) !== 1) stride++;
  return stride % count;
}

function metadataOf(i: number): Omit<ScaleDoc, "id" | "text"> {
  const h = hash(i, 0x51ed27);
  const createdMs = YEAR_START + (hash(i, 0x2c1b3c6d) % YEAR_SECONDS) * 1000;
  return {
    // open about a third of the time, the rest split between closed and pending
    status: STATUSES[h % 3]!,
    priority: 1 + (hash(i, 0x7f4a7c15) % 5),
    created: new Date(createdMs).toISOString().replace(/\.\d{3}Z$/, "Z"),
    createdMs,
    type: TYPES[hash(i, 0x165667b1) % TYPES.length]!,
  };
}

/** Yields the N documents in batches of `size`, building each batch only when asked for. */
export function* scaleBatches(sentences: string[], n: number, size: number): Generator<ScaleDoc[]> {
  const count = sentences.length;
  let pass = 0;
  let stride = 1;
  let step = 0; // sentences read in this pass
  const next = () => {
    if (step === count) {
      pass++;
      step = 0;
      stride = strideOf(pass, count);
    }
    return sentences[(step++ * stride + pass) % count]!;
  };
  for (let start = 0; start < n; start += size) {
    const batch: ScaleDoc[] = [];
    for (let i = start; i < Math.min(n, start + size); i++) {
      let text = next();
      while (text.length < TARGET_CHARS) text += " " + next();
      batch.push({ id: `doc-${i}`, text, ...metadataOf(i) });
    }
    yield batch;
  }
}

/** The metadata object docstore stores for a document. */
export function metadataJson(d: ScaleDoc) {
  return { status: d.status, priority: d.priority, created: d.created, type: d.type };
}
