/**
 * Points as Qdrant stores them (layout in schema.ts): deterministic ids, payloads, vectors, and
 * the way back from a stored payload to the port's types.
 */
import { createHash } from "node:crypto";
import type { Schemas } from "@qdrant/js-client-rest";
import type { ChunkInput, IndexedDocument, SearchHit, StoredChunk } from "../../ports.ts";
import type { Metadata } from "../../domain/metadata.ts";
import { samePair, sameValue } from "../../filter/compare.ts";
import { KEY, KIND, VECTORS, type Kind } from "./schema.ts";
import { documentVector } from "./sparse.ts";
import { docKey } from "../versions.ts";

type Payload = Record<string, unknown>;

/** A fixed namespace, so ids are the same in every process and every release. */
const NAMESPACE = Buffer.from("6f1c2a9e0d4b4c57a3e8b1d2c4f60718", "hex");

/**
 * A version-5 style UUID (SHA-1 of namespace and name) for one chunk or one document of one
 * version: a retried job writes the same ids, so it never leaves duplicates behind.
 */
export function pointId(collection: string, docId: string, version: number, chunk: number | "document"): string {
  const name = JSON.stringify([collection, docId, version, chunk]);
  const h = createHash("sha1").update(NAMESPACE).update(name, "utf8").digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** The derived keyword lists that make ISEMPTY and SAMEAS exact filters (see filter/qdrant.ts). */
export function derivedLists(metadata: Metadata): Payload {
  const keys = Object.keys(metadata).sort();
  const same: string[] = [];
  for (let i = 0; i < keys.length; i++) {
    for (let j = i + 1; j < keys.length; j++) {
      if (sameValue(metadata, keys[i]!, keys[j]!)) same.push(samePair(keys[i]!, keys[j]!));
    }
  }
  return {
    [KEY.metaKeys]: keys,
    [KEY.metaBlank]: keys.filter((k) => metadata[k] === ""),
    [KEY.metaSame]: same,
  };
}

function basePayload(doc: IndexedDocument, kind: Kind): Payload {
  return {
    [KEY.kind]: kind,
    [KEY.collection]: doc.collection,
    [KEY.docId]: doc.docId,
    [KEY.version]: doc.version,
    [KEY.metadata]: doc.metadata,
    ...derivedLists(doc.metadata),
  };
}

export function chunkPayload(doc: IndexedDocument, chunk: ChunkInput): Payload {
  return {
    ...basePayload(doc, KIND.chunk),
    [KEY.chunkIndex]: chunk.index,
    start: chunk.start,
    end: chunk.end,
    [KEY.text]: chunk.text,
    ...(chunk.citation && Object.keys(chunk.citation).length > 0 ? { cite: chunk.citation } : {}),
  };
}

/** What a document point adds: the hash of the content it was made from, when known (refreshDocument). */
const hashOf = (doc: IndexedDocument): Payload => (doc.sha256 ? { sha256: doc.sha256 } : {});

/** A document point's payload: its metadata and its whole text. */
export function documentPayload(doc: IndexedDocument): Payload {
  return { ...basePayload(doc, KIND.document), [KEY.text]: doc.text, ...hashOf(doc) };
}

/** Whether a point is of a kind: `kind` is one kind, or both for a whole document (versionPoints). */
export function isKind(payload: Payload | null | undefined, kind: Kind): boolean {
  const value = payload?.[KEY.kind];
  return value === kind || (Array.isArray(value) && value.includes(kind));
}

/**
 * The points of one version, with ids that depend only on collection, document, version and
 * chunk (a retried job overwrites its own points). When one chunk is the whole text, the
 * document is one point of both kinds (`kind: ["chunk", "document"]`, the document's id): a
 * search finds it as a chunk, a document read as a document, and its text, metadata and
 * vectors are stored once. Otherwise one point per chunk, with its sparse vector (left out when
 * the chunk has no words) and its dense vector when given, and one document point without any
 * vector. write.ts says in which order they are written.
 */
export function versionPoints(
  doc: IndexedDocument,
  chunks: readonly ChunkInput[],
): { chunks: Schemas["PointStruct"][]; document: Schemas["PointStruct"] } {
  const vectorOf = (chunk: ChunkInput) => {
    const vector: Record<string, Schemas["Vector"]> = {};
    const sparse = documentVector(chunk.text);
    if (sparse.indices.length > 0) vector[VECTORS.sparse] = sparse;
    if (chunk.vector) vector[VECTORS.dense] = chunk.vector;
    return vector;
  };
  const id = pointId(doc.collection, doc.docId, doc.version, "document");
  const [only] = chunks;
  if (chunks.length === 1 && only!.start === 0 && only!.end === doc.text.length && only!.text === doc.text) {
    const payload = { ...chunkPayload(doc, only!), [KEY.kind]: [KIND.chunk, KIND.document], ...hashOf(doc) };
    return { chunks: [], document: { id, vector: vectorOf(only!), payload } };
  }
  const points = chunks.map((chunk) => ({
    id: pointId(doc.collection, doc.docId, doc.version, chunk.index),
    vector: vectorOf(chunk),
    payload: chunkPayload(doc, chunk),
  }));
  return { chunks: points, document: { id, vector: {}, payload: documentPayload(doc) } };
}

/**
 * The points of each document at its highest version among them, in their order: while a
 * batch is written a document may have points of two versions (write.ts), and an answer shows
 * one. Answers whether any point was left out.
 */
export function newestOnly<P extends { payload?: Payload | null }>(points: readonly P[]): { kept: P[]; dropped: boolean } {
  const newest = new Map<string, number>();
  const keyOf = (p: P) => docKey(p.payload?.[KEY.collection] as string, p.payload?.[KEY.docId] as string);
  for (const p of points) {
    const key = keyOf(p);
    newest.set(key, Math.max(newest.get(key) ?? -Infinity, Number(p.payload?.[KEY.version])));
  }
  const kept = points.filter((p) => Number(p.payload?.[KEY.version]) === newest.get(keyOf(p)));
  return { kept, dropped: kept.length < points.length };
}

function field<T>(payload: Payload | null | undefined, key: string, type: "string" | "number" | "object"): T {
  const value = payload?.[key];
  if (typeof value !== type || value === null) throw new Error(`Qdrant index: point payload lacks ${type} "${key}"`);
  return value as T;
}

/**
 * The metadata as it was given. Integers beyond 2^53 come back as the numbers that were written:
 * Qdrant keeps the digits JSON.stringify sent, and the client parses its answers as plain JSON
 * (patches/: as published, it turns such integers into BigInt, which JSON.stringify refuses).
 */
export function metadataOf(payload: Payload | null | undefined): Metadata {
  return field<Metadata>(payload, KEY.metadata, "object");
}

export function hitOf(point: { payload?: Payload | null; score: number }): SearchHit {
  const p = point.payload;
  return {
    collection: field(p, KEY.collection, "string"),
    docId: field(p, KEY.docId, "string"),
    chunkIndex: field(p, KEY.chunkIndex, "number"),
    text: field(p, KEY.text, "string"),
    start: field(p, "start", "number"),
    end: field(p, "end", "number"),
    score: point.score,
    metadata: metadataOf(p),
    ...(p && typeof p.cite === "object" && p.cite !== null ? { citation: p.cite as SearchHit["citation"] } : {}),
  };
}

/** A chunk point as the port shows it, without score or metadata. */
export function storedChunkOf(p: Payload | null | undefined): StoredChunk {
  return {
    chunkIndex: field(p, KEY.chunkIndex, "number"),
    text: field(p, KEY.text, "string"),
    start: field(p, "start", "number"),
    end: field(p, "end", "number"),
    ...(p && typeof p.cite === "object" && p.cite !== null ? { citation: p.cite as StoredChunk["citation"] } : {}),
  };
}

/** A document point read without its text (findDocuments adds the text of the page it returns). */
export interface DocumentHead {
  id: string | number;
  /**
   * The point that holds the document's text: its own, or, in a collection written before
   * documents of one chunk became one point, the chunk point its `text_point` names.
   */
  textId: string | number;
  collection: string;
  docId: string;
  version: number;
  metadata: Metadata;
}

export function headOf(point: { id: string | number; payload?: Payload | null }): DocumentHead {
  const p = point.payload;
  const textPoint = p?.[KEY.textPoint];
  return {
    id: point.id,
    textId: typeof textPoint === "string" ? textPoint : point.id,
    collection: field(p, KEY.collection, "string"),
    docId: field(p, KEY.docId, "string"),
    version: field(p, KEY.version, "number"),
    metadata: metadataOf(p),
  };
}
