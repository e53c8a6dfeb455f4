/**
 * The behaviour every Catalog adapter must have, written once; SqliteCatalog's is the reference.
 * Tests isolate themselves by random collection names, so a factory may hand out a catalog
 * that other tests share (one Redis); they only ever look at their own collections.
 */
import { describe, expect, it } from "vitest";
import { fixturePerTest } from "./contract-fixture.ts";
import { randomUUID } from "node:crypto";
import type { Catalog, CollectionStats, DocumentRecord, NewDocument } from "../src/ports.ts";
import { BadRequestError } from "../src/errors.ts";
import { HOSTILE_VALUES, LOOKALIKE_IDS } from "./hostile-values.ts";

export interface CatalogFixture {
  catalog: Catalog;
  cleanup(): Promise<void>;
}

const isIso = (s: string) => new Date(s).toISOString() === s;

export function newDocument(collection: string, docId: string, extra: Partial<NewDocument> = {}): NewDocument {
  return {
    collection,
    docId,
    jobId: randomUUID(),
    metadata: { status: "open", priority: 2, tags: ["a", "b"], empty: [] },
    filename: `${docId}.txt`,
    contentType: "text/plain",
    blobKey: `${collection}/${docId}/${randomUUID()}`,
    size: 123,
    sha256: "ab".repeat(32),
    ...extra,
  };
}

export function describeCatalogContract(name: string, make: () => Promise<CatalogFixture>): void {
  describe(`Catalog contract: ${name}`, () => {
    let cat: Catalog;
    let c: string;
    fixturePerTest(make, (fx, collection) => {
      cat = fx.catalog;
      c = collection;
    });

    const stats = async (name: string): Promise<CollectionStats | undefined> => (await cat.listCollections()).find((s) => s.name === name);
    const ids = async (collection: string) => (await cat.listDocuments(collection, 1000, null)).items.map((d) => d.docId);

    it("accepts a new document as queued version 1, then each re-accept as the next version", async () => {
      const first = newDocument(c, "doc-1", { filename: null, metadata: {} });
      const a = await cat.accept(first);
      expect(a).toMatchObject({ previous: null, record: { ...first, version: 1, status: "queued", chunks: 0, error: null } });
      expect(isIso(a.record.createdAt) && a.record.updatedAt === a.record.createdAt).toBe(true);
      expect(await cat.get(c, "doc-1")).toEqual(a.record);
      expect(await cat.markFailed(c, "doc-1", 1, "boom")).toBe(true);
      const failed = await cat.get(c, "doc-1");

      const second = newDocument(c, "doc-1", { metadata: { priority: 7, note: "ünïcode ✓", list: [1, 2.5, true, "x"] } });
      const b = await cat.accept(second);
      expect(b.previous).toEqual(failed);
      expect(b.record).toMatchObject({ ...second, version: 2, status: "queued", chunks: 0, error: null, createdAt: a.record.createdAt });
      expect(b.record.updatedAt >= a.record.updatedAt && isIso(b.record.updatedAt)).toBe(true);
      expect(await cat.get(c, "doc-1")).toEqual(b.record);
      expect((await cat.accept(newDocument(c, "doc-1"))).record.version).toBe(3);
      expect([await cat.get(c, "missing"), await cat.get(`${c}-none`, "doc-1")]).toEqual([null, null]);
    });

    it("gives concurrent accepts of one doc id distinct, increasing versions", async () => {
      const n = 12;
      const results = await Promise.all(Array.from({ length: n }, () => cat.accept(newDocument(c, "same"))));
      const byVersion = results.sort((x, y) => x.record.version - y.record.version);
      expect(byVersion.map((r) => r.record.version)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      byVersion.forEach((r, i) => expect(r.previous?.jobId ?? null).toBe(i === 0 ? null : byVersion[i - 1]?.record.jobId));
      expect((await cat.get(c, "same"))?.version).toBe(n);
      expect(await stats(c)).toEqual({ name: c, documents: 1, ready: 0, pending: 1, failed: 0 });
      await Promise.all(Array.from({ length: n }, (_, i) => cat.accept(newDocument(`${c}-new`, `d${i}`))));
      expect(await stats(`${c}-new`)).toEqual({ name: `${c}-new`, documents: n, ready: 0, pending: n, failed: 0 });
    });

    it("rolls back a new document: it is gone, and so is its collection once empty", async () => {
      const { record, previous } = await cat.accept(newDocument(c, "only"));
      await cat.rollback(record, previous);
      expect(await cat.get(c, "only")).toBeNull();
      expect(await cat.collectionExists(c)).toBe(false);
      expect(await stats(c)).toBeUndefined();

      await cat.accept(newDocument(c, "stays"));
      const other = await cat.accept(newDocument(c, "other"));
      await cat.rollback(other.record, null);
      expect(await ids(c)).toEqual(["stays"]);
      expect(await stats(c)).toEqual({ name: c, documents: 1, ready: 0, pending: 1, failed: 0 });
    });

    it("rolls back a re-accept: the previous version comes back whole", async () => {
      await cat.accept(newDocument(c, "d"));
      await cat.markReady(c, "d", 1, 4);
      const ready = await cat.get(c, "d");
      const v2 = await cat.accept(newDocument(c, "d", { filename: null, metadata: { x: 1 } }));
      expect(v2.previous).toEqual(ready);
      await cat.rollback(v2.record, v2.previous);
      expect(await cat.get(c, "d")).toEqual(ready);
      expect(await stats(c)).toEqual({ name: c, documents: 1, ready: 1, pending: 0, failed: 0 });

      await cat.markFailed(c, "d", 1, "bad bytes");
      const failed = await cat.get(c, "d");
      const v3 = await cat.accept(newDocument(c, "d"));
      await cat.rollback(v3.record, v3.previous);
      expect(await cat.get(c, "d")).toEqual(failed);
      expect(await stats(c)).toEqual({ name: c, documents: 1, ready: 0, pending: 0, failed: 1 });

      // Once a newer version was accepted, an older accept's rollback changes nothing.
      const v4 = await cat.accept(newDocument(c, "d"));
      const v5 = await cat.accept(newDocument(c, "d"));
      await cat.rollback(v4.record, v4.previous);
      await cat.rollback(v4.record, null);
      expect(await cat.get(c, "d")).toEqual(v5.record);
    });

    it("marks a document only while the given version is current", async () => {
      const { record } = await cat.accept(newDocument(c, "d"));
      expect(await cat.markProcessing(c, "d", 1)).toBe(true);
      const processing = await cat.get(c, "d");
      expect(processing).toMatchObject({ status: "processing", chunks: 0, error: null, createdAt: record.createdAt });
      expect(processing!.updatedAt >= record.updatedAt && isIso(processing!.updatedAt)).toBe(true);
      expect(await cat.markReady(c, "d", 1, 9)).toBe(true);
      expect(await cat.get(c, "d")).toMatchObject({ status: "ready", chunks: 9, error: null });
      expect(await cat.markProcessing(c, "d", 1)).toBe(true); // no transition rules: the version decides
      expect(await cat.get(c, "d")).toMatchObject({ status: "processing", chunks: 9 });
      expect(await cat.markFailed(c, "d", 1, "boom")).toBe(true);
      expect(await cat.get(c, "d")).toMatchObject({ status: "failed", chunks: 0, error: "boom" });
      expect((await cat.markReady(c, "d", 1, 2)) && (await cat.get(c, "d"))).toMatchObject({ status: "ready", chunks: 2, error: null });

      const v2 = (await cat.accept(newDocument(c, "d"))).record;
      const stale = [cat.markProcessing(c, "d", 1), cat.markReady(c, "d", 1, 5), cat.markFailed(c, "d", 1, "late")];
      expect(await Promise.all(stale)).toEqual([false, false, false]);
      expect(await cat.get(c, "d")).toEqual(v2);
      expect(await cat.markReady(c, "missing", 1, 1)).toBe(false);
      expect(await cat.markFailed(`${c}-none`, "d", 1, "x")).toBe(false);
      expect(await stats(c)).toEqual({ name: c, documents: 1, ready: 0, pending: 1, failed: 0 });
    });

    it("counts documents by status per collection, in name order", async () => {
      const [c1, c2] = [`${c}-a`, `${c}-b`];
      for (const id of ["q", "p", "r", "f", "r2"]) await cat.accept(newDocument(c1, id));
      await cat.accept(newDocument(c2, "x"));
      await cat.markProcessing(c1, "p", 1);
      await cat.markReady(c1, "r", 1, 3);
      await cat.markReady(c1, "r2", 1, 1);
      await cat.markFailed(c1, "f", 1, "no text");
      await cat.markReady(c2, "x", 1, 1);
      const mine = (await cat.listCollections()).filter((s) => s.name.startsWith(c));
      expect(mine).toEqual([
        { name: c1, documents: 5, ready: 2, pending: 2, failed: 1 },
        { name: c2, documents: 1, ready: 1, pending: 0, failed: 0 },
      ]);
      expect(await cat.collectionExists(c1)).toBe(true);
      expect(await cat.collectionExists(c)).toBe(false);
      await cat.ping();
    });

    it("deletes a document and returns it; the collection stays, even empty", async () => {
      await cat.accept(newDocument(c, "a"));
      const b = await cat.accept(newDocument(c, "b"));
      await cat.markReady(c, "a", 1, 2);
      expect(await cat.delete(c, "b")).toEqual(b.record);
      expect(await cat.get(c, "b")).toBeNull();
      expect(await cat.delete(c, "b")).toBeNull();
      expect(await cat.delete(`${c}-none`, "a")).toBeNull();
      expect(await ids(c)).toEqual(["a"]);
      expect(await stats(c)).toEqual({ name: c, documents: 1, ready: 1, pending: 0, failed: 0 });
      expect((await cat.delete(c, "a"))?.status).toBe("ready");
      expect(await cat.collectionExists(c)).toBe(true);
      expect(await stats(c)).toEqual({ name: c, documents: 0, ready: 0, pending: 0, failed: 0 });
      // Versions start again at 1 once a document is gone (SqliteCatalog's behaviour).
      expect(await cat.accept(newDocument(c, "a"))).toMatchObject({ previous: null, record: { version: 1 } });
    });

    it("deletes a whole collection and nothing of it is left", async () => {
      const sibling = `${c}-2`;
      const docIds = Array.from({ length: 23 }, (_, i) => `doc:${i}@x.y`);
      for (const id of docIds) await cat.accept(newDocument(c, id));
      await cat.markReady(c, "doc:3@x.y", 1, 1);
      await cat.accept(newDocument(sibling, "doc:1@x.y"));
      expect(await cat.deleteCollection(c)).toBe(docIds.length);
      for (const id of docIds) expect(await cat.get(c, id)).toBeNull();
      expect(await cat.collectionExists(c)).toBe(false);
      expect(await stats(c)).toBeUndefined();
      expect(await cat.listDocuments(c, 10, null)).toEqual({ items: [], next: null });
      expect(await cat.markReady(c, "doc:1@x.y", 1, 1)).toBe(false);
      expect(await cat.deleteCollection(c)).toBe(0);
      expect(await ids(sibling)).toEqual(["doc:1@x.y"]);

      expect(await cat.accept(newDocument(c, "doc:1@x.y"))).toMatchObject({ previous: null, record: { version: 1 } });
      expect(await stats(c)).toEqual({ name: c, documents: 1, ready: 0, pending: 1, failed: 0 });
    });

    it("knows every metadata key a collection's documents were loaded with, until it is dropped", async () => {
      const other = `${c}-2`;
      expect(await cat.metadataFields([c])).toEqual(new Set());
      await cat.accept(newDocument(c, "a", { metadata: { status: "open", priority: 1 } }));
      await cat.accept(newDocument(c, "b", { metadata: {} }));
      await cat.accept(newDocument(other, "a", { metadata: { owner: "x", status: "y" } }));
      expect(await cat.metadataFields([c])).toEqual(new Set(["status", "priority"]));
      expect(await cat.metadataFields([c, other, `${c}-none`])).toEqual(new Set(["status", "priority", "owner"]));
      // A superset: replacing or deleting the document that had a key keeps the key.
      await cat.accept(newDocument(c, "a", { metadata: { flag: true } }));
      await cat.delete(c, "a");
      expect(await cat.metadataFields([c])).toEqual(new Set(["status", "priority", "flag"]));
      await cat.deleteCollection(c);
      expect(await cat.metadataFields([c])).toEqual(new Set());
      await cat.accept(newDocument(c, "a", { metadata: { type: "memo" } }));
      expect(await cat.metadataFields([c])).toEqual(new Set(["type"]));
      expect(await cat.metadataFields([])).toEqual(new Set());
    });

    it("keeps ids, file names and metadata carrying SQL, wildcards, NUL or paths only as values", async () => {
      // The API admits only plain ids (DOC_ID); the catalog must not rely on it for its queries.
      const docIds = [...HOSTILE_VALUES.map((v) => `d${v}`), ...LOOKALIKE_IDS];
      for (const [i, id] of docIds.entries()) {
        const v = HOSTILE_VALUES[i % HOSTILE_VALUES.length]!;
        await cat.accept(newDocument(c, id, { metadata: { status: v, note: `pre${v}post`, tags: [v, "plain"] }, filename: v }));
      }
      for (const [i, id] of docIds.entries()) {
        const v = HOSTILE_VALUES[i % HOSTILE_VALUES.length]!;
        const got = await cat.get(c, id);
        expect(got, JSON.stringify(id)).toMatchObject({
          collection: c,
          docId: id,
          filename: v,
          metadata: { status: v, note: `pre${v}post`, tags: [v, "plain"] },
        });
      }
      expect(await cat.get(c, "d' OR '1'='1")).toBeNull();
      expect(await cat.get(c, "a%")).toBeNull();
      expect((await ids(c)).sort()).toEqual([...docIds].sort());
      expect(await cat.metadataFields([c])).toEqual(new Set(["status", "note", "tags"]));
      // Deleting one id takes exactly it: not the ids a LIKE or a glob of it would match.
      for (const id of ["a_c", "d%", "d_", "d*", "d' OR 1=1 --"]) expect(await cat.delete(c, id), id).toMatchObject({ docId: id });
      expect((await ids(c)).sort()).toEqual(docIds.filter((id) => !["a_c", "d%", "d_", "d*", "d' OR 1=1 --"].includes(id)).sort());
      expect(await stats(c)).toMatchObject({ documents: docIds.length - 5 });
    });

    it("keeps collections whose names a LIKE pattern or a glob would confuse apart", async () => {
      const names = [`${c}_x`, `${c}yx`, `${c}-x`, `${c}_`, `${c}__x`];
      for (const name of names) await cat.accept(newDocument(name, "d1", { metadata: { owner: name } }));
      expect(await cat.deleteCollection(`${c}_x`)).toBe(1);
      expect(await cat.deleteCollection(`${c}_`)).toBe(1);
      for (const name of [`${c}yx`, `${c}-x`, `${c}__x`]) {
        expect(await cat.collectionExists(name), name).toBe(true);
        expect(await cat.get(name, "d1"), name).toMatchObject({ collection: name, metadata: { owner: name } });
        expect(await cat.metadataFields([name]), name).toEqual(new Set(["owner"]));
      }
      expect(await cat.collectionExists(`${c}_x`)).toBe(false);
      expect(await cat.get(`${c}_x`, "d1")).toBeNull();
      expect(await cat.collectionExists(`${c}%`)).toBe(false);
      const listed = (await cat.listCollections()).map((s) => s.name).filter((n) => n.startsWith(c));
      expect(listed.sort()).toEqual([`${c}yx`, `${c}-x`, `${c}__x`].sort());
    });

    it("pages documents by doc id with an opaque cursor", async () => {
      const all = ["b", "a", "a:1", "a.b", "A", "0", "a@b", "z-9", "a_b"];
      for (const id of all) await cat.accept(newDocument(c, id));
      await cat.accept(newDocument(`${c}-x`, "a:0"));
      const expected = [...all].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
      const seen: DocumentRecord[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await cat.listDocuments(c, 4, cursor);
        expect(page.items.length).toBeLessThanOrEqual(4);
        seen.push(...page.items);
        cursor = page.next;
        pages++;
      } while (cursor !== null);
      expect(pages).toBe(3);
      expect(seen.map((d) => d.docId)).toEqual(expected);
      expect(seen[0]).toEqual(await cat.get(c, expected[0]!));

      expect((await cat.listDocuments(c, 9, null)).next).toBeNull(); // exactly the last item: no next page
      const first = await cat.listDocuments(c, 3, null);
      expect(first.next).not.toBeNull();
      const rest = await cat.listDocuments(c, 100, first.next);
      expect(rest.items.map((d) => d.docId)).toEqual(expected.slice(3));
      expect(rest.next).toBeNull();
      await expect(cat.listDocuments(c, 3, "not a cursor")).rejects.toBeInstanceOf(BadRequestError);
      expect(await cat.listDocuments(`${c}-none`, 3, null)).toEqual({ items: [], next: null });
    });

    it("puts a settled version back in the queue, only while it is current", async () => {
      await cat.accept(newDocument(c, "d"));
      expect(await cat.markFailed(c, "d", 1, "boom")).toBe(true);
      expect(await cat.markQueued(c, "d", 2)).toBe(false);
      expect(await cat.markQueued(`${c}-none`, "d", 1)).toBe(false);
      expect(await cat.markQueued(c, "d", 1)).toBe(true);
      expect(await cat.get(c, "d")).toMatchObject({ version: 1, status: "queued", chunks: 0, error: null });
      expect(await cat.markReady(c, "d", 1, 3)).toBe(true);
      expect(await cat.markQueued(c, "d", 1)).toBe(true);
      expect(await cat.get(c, "d")).toMatchObject({ status: "queued", chunks: 0 });
      expect(await stats(c)).toEqual({ name: c, documents: 1, ready: 0, pending: 1, failed: 0 });
    });

    it("lists pending documents changed before an instant, oldest change first, a page at a time", async () => {
      const tick = () => new Promise((r) => setTimeout(r, 3)); // distinct instants, so the order is the changes'
      const pending = async (before: string, limit = 100) => {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const page = await cat.listPending(before, limit, cursor);
          expect(page.items.length).toBeLessThanOrEqual(limit);
          seen.push(
            ...page.items
              .filter((d) => d.collection === c || d.collection === `${c}-x`)
              .map((d) => `${d.collection === c ? "" : "x/"}${d.docId}:${d.status}`),
          );
          cursor = page.next;
        } while (cursor !== null);
        return seen;
      };
      for (const id of ["p1", "p2", "p3", "p4", "p5", "p6"]) {
        await cat.accept(newDocument(c, id));
        await tick();
      }
      await cat.accept(newDocument(`${c}-x`, "p1"));
      await tick();
      await cat.markReady(c, "p2", 1, 1);
      await cat.markFailed(c, "p5", 1, "no");
      await cat.delete(c, "p6");
      await tick();
      const cut = new Date().toISOString();
      await tick();
      await cat.markProcessing(c, "p3", 1);
      await tick();
      const late = (await cat.accept(newDocument(c, "p7"))).record;
      await tick();
      const v2 = await cat.accept(newDocument(c, "p4"));
      await cat.rollback(v2.record, v2.previous); // p4 is back, as it was before: queued at its first instant
      const p8 = await cat.accept(newDocument(c, "p8"));
      await cat.rollback(p8.record, p8.previous);

      const end = new Date(Date.now() + 60_000).toISOString();
      expect(await pending(cut)).toEqual(["p1:queued", "p4:queued", "x/p1:queued"]);
      expect(await pending(end)).toEqual(["p1:queued", "p4:queued", "x/p1:queued", "p3:processing", "p7:queued"]);
      expect(await pending(end, 1)).toEqual(await pending(end));
      expect(await pending(late.updatedAt)).toEqual(["p1:queued", "p4:queued", "x/p1:queued", "p3:processing"]);
      await expect(cat.listPending(end, 3, "not a cursor")).rejects.toBeInstanceOf(BadRequestError);

      // A dropped collection's documents are pending no more, nor are they when it is made again.
      expect(await cat.deleteCollection(c)).toBe(6);
      await cat.accept(newDocument(c, "p9"));
      await cat.markReady(c, "p9", 1, 1);
      expect(await pending(end)).toEqual(["x/p1:queued"]);
    });
  });
}
