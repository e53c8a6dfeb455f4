import { describe, expect, it } from "vitest";
import type { IndexedDocument } from "../../ports.ts";
import { chunkPayload, derivedLists, documentPayload, headOf, hitOf, isKind, newestOnly, pointId, versionPoints } from "./points.ts";
import { samePair } from "../../filter/qdrant-payload.ts";
import { documentVector } from "./sparse.ts";

const doc: IndexedDocument = {
  collection: "c",
  docId: "d1",
  version: 2,
  metadata: { status: "open", note: "", prev: "open", tags: [] },
  text: "Full text",
};

describe("point ids", () => {
  it("are version-5 UUIDs fixed by collection, document, version and chunk", () => {
    const id = pointId("c", "d1", 2, 0);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(pointId("c", "d1", 2, 0)).toBe(id);
    const others = [
      pointId("c", "d1", 2, 1),
      pointId("c", "d1", 3, 0),
      pointId("c", "d2", 2, 0),
      pointId("c2", "d1", 2, 0),
      pointId("c", "d1", 2, "document"),
    ];
    expect(new Set([id, ...others]).size).toBe(6);
    // No ambiguity from separators inside names.
    expect(pointId('a"', "b", 1, 0)).not.toBe(pointId("a", '"b', 1, 0));
  });
});

describe("payloads", () => {
  it("derive the lists that make ISEMPTY and SAMEAS exact", () => {
    expect(derivedLists({ b: 1, a: 1, c: "", d: [1, "x"], e: [1, "x"], f: [] })).toEqual({
      meta_keys: ["a", "b", "c", "d", "e", "f"],
      meta_blank: ["c"],
      meta_same: ["a=b", "d=e"],
    });
    expect(derivedLists({ a: 1, b: "1", c: true, d: "true" })).toMatchObject({ meta_same: [] });
    expect(samePair("z", "a")).toBe("a=z");
  });

  it("carry the tenant key, the document's identity and metadata, and the chunk's place", () => {
    expect(chunkPayload(doc, { index: 3, text: "chunk", start: 10, end: 15 })).toEqual({
      kind: "chunk",
      collection: "c",
      doc_id: "d1",
      version: 2,
      metadata: doc.metadata,
      meta_keys: ["note", "prev", "status", "tags"],
      meta_blank: ["note"],
      meta_same: ["prev=status"],
      chunk_index: 3,
      start: 10,
      end: 15,
      text: "chunk",
    });
    expect(documentPayload(doc)).toMatchObject({ kind: "document", collection: "c", doc_id: "d1", version: 2, text: "Full text" });
  });

  it("make a version's points: chunks with their vectors, one document point without any", () => {
    const points = versionPoints(doc, [
      { index: 0, text: "herons wade", start: 0, end: 11, vector: [0.1, 0.2] },
      { index: 1, text: "?!", start: 12, end: 14 },
    ]);
    expect(points.chunks.map((p) => [p.id, p.payload?.kind])).toEqual([
      [pointId("c", "d1", 2, 0), "chunk"],
      [pointId("c", "d1", 2, 1), "chunk"],
    ]);
    expect(points.document.id).toBe(pointId("c", "d1", 2, "document"));
    expect(points.chunks[0]!.vector).toEqual({ bm25: documentVector("herons wade"), dense: [0.1, 0.2] });
    expect(points.chunks[1]!.vector).toEqual({}); // no words: no sparse vector rather than an empty one
    expect(points.document.vector).toEqual({});
    expect(points.document.payload).toMatchObject({ kind: "document", text: "Full text", metadata: doc.metadata });
  });

  it("make a document of one whole chunk one point of both kinds, its text stored once", () => {
    const whole = versionPoints(doc, [{ index: 0, text: "Full text", start: 0, end: 9, vector: [0.3, 0.4] }]);
    expect(whole.chunks).toEqual([]);
    expect(whole.document.id).toBe(pointId("c", "d1", 2, "document"));
    expect(whole.document.vector).toEqual({ bm25: documentVector("Full text"), dense: [0.3, 0.4] });
    expect(whole.document.payload).toMatchObject({ kind: ["chunk", "document"], text: "Full text", chunk_index: 0, start: 0, end: 9 });
    expect(whole.document.payload).not.toHaveProperty("text_point");
    expect([isKind(whole.document.payload, "chunk"), isKind(whole.document.payload, "document")]).toEqual([true, true]);
    expect(hitOf({ payload: whole.document.payload, score: 1 }).text).toBe("Full text");
    expect(headOf({ id: whole.document.id, payload: whole.document.payload }).textId).toBe(whole.document.id);
    // A part of the text is a chunk of its own; the document point keeps the whole text.
    const part = versionPoints(doc, [{ index: 0, text: "Full", start: 0, end: 4 }]);
    expect(part.chunks).toHaveLength(1);
    expect(part.document.payload).toMatchObject({ kind: "document", text: "Full text" });
    expect([isKind(part.document.payload, "chunk"), isKind(part.chunks[0]!.payload, "document")]).toEqual([false, false]);
  });

  it("read the text of a document written before one-point documents where its chunk holds it", () => {
    const old = { ...documentPayload(doc), text: undefined, text_point: "chunk-id" };
    expect(headOf({ id: "x", payload: old }).textId).toBe("chunk-id");
  });

  it("keep each document's highest version among points, in their order", () => {
    const p = (docId: string, version: number, collection = "c") => ({ payload: { collection, doc_id: docId, version } });
    const points = [p("a", 1), p("b", 1), p("a", 2), p("a", 1, "e"), p("b", 1)];
    expect(newestOnly(points)).toEqual({ kept: [points[1], points[2], points[3], points[4]], dropped: true });
    expect(newestOnly(points.slice(1)).dropped).toBe(false);
  });
});

describe("reading points back", () => {
  it("gives hits and document heads, and refuses payloads that are not ours", () => {
    const payload = chunkPayload(doc, { index: 1, text: "chunk", start: 4, end: 9 });
    expect(hitOf({ payload, score: 1.5 })).toEqual({
      collection: "c",
      docId: "d1",
      chunkIndex: 1,
      text: "chunk",
      start: 4,
      end: 9,
      score: 1.5,
      metadata: doc.metadata,
    });
    expect(headOf({ id: "x", payload: documentPayload(doc) })).toEqual({
      id: "x",
      textId: "x",
      collection: "c",
      docId: "d1",
      version: 2,
      metadata: doc.metadata,
    });
    expect(() => hitOf({ payload: { ...payload, text: 3 }, score: 1 })).toThrow(/lacks string "text"/);
    expect(() => headOf({ id: 1, payload: null })).toThrow(/lacks/);
  });
});
