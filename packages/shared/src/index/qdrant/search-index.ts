import type { Schemas } from "@qdrant/js-client-rest";
import type {
  DocumentChunks,
  FindRequest,
  IndexEntry,
  IndexedDocument,
  InventoryScope,
  ScanRequest,
  SearchHit,
  SearchIndex,
  SearchRequest,
} from "../../ports.ts";
import { compareCodePoints } from "../../filter/compare.ts";
import { evaluate } from "../../filter/evaluate.ts";
import { compareForOrder } from "../../filter/order.ts";
import type { OrderTerm } from "../../filter/ast.ts";
import { KNOWN_FIELD_TYPES } from "../../domain/metadata.ts";
import { queryTerms } from "../../search/query-terms.ts";
import { DEFAULT_FUSION, RRF_K, reciprocalRankFusion, type HybridFusion } from "../../search/fusion.ts";
import { createQdrantClient, qdrantError, type QdrantApi } from "./client.ts";
import { collectionDimensionMismatch, prepareCollection } from "./setup.ts";
import { compileFilter } from "../../filter/qdrant.ts";
import { derivedLists, headOf, hitOf, isKind, metadataOf, newestOnly, storedChunkOf, versionPoints, type DocumentHead } from "./points.ts";
import { HEAD_PAYLOAD, WHOLE_PAYLOAD, rankers, rankingBatch, scopeFilter, scrollRequest, searchRequest, textRequest } from "./query.ts";
import { createCollectionRequest, DEFAULT_COLLECTION, KEY, KIND, metadataKey, type Placement } from "./schema.ts";
import { queryVector } from "./sparse.ts";
import { fetchUntilKept, firstDepth } from "../deeper.ts";
import { acceptHighest, docKey, newestVersions, supersededIn, type IndexItem as Item } from "../versions.ts";
import {
  chunkCount,
  collectionFilter,
  documentFilter,
  inventoryFilter,
  supersededFilter,
  upsertBatches,
  VERSION_PAYLOAD,
  versionsFilter,
} from "./write.ts";

export interface QdrantIndexOptions {
  /** Used when no `client` is given. */
  url?: string;
  apiKey?: string | undefined;
  client?: QdrantApi;
  /** Size of the dense vectors (the embedder's `dimensions`); null without an embedder: the collection then stores none. */
  dimensions: number | null;
  /** The Qdrant collection holding every docstore collection. */
  collectionName?: string;
  /** Points per scroll request (default 512). */
  scrollPage?: number;
  /** Shards of the collection, when it is created (default 1). */
  shards?: number;
  /** Copies of each shard when the collection is created on a cluster (default 1). */
  replicationFactor?: number;
  /** How hybrid searches fuse their two rankings (default DEFAULT_FUSION). */
  fusion?: HybridFusion;
}

type Payload = Record<string, unknown>;
type Point = { id: string | number; score: number; payload?: Payload | null };

/** Known fields Qdrant can order by: range-indexed (schema.ts), one value of one type per document. */
const ORDERABLE = new Set(
  Object.entries(KNOWN_FIELD_TYPES).flatMap(([field, type]) => (type === "integer" || type === "instant" ? [field] : [])),
);

/** What a head read for sorting carries when the filter is exact: no metadata but the ORDERBY fields. */
const leanPayload = (orderBy: readonly OrderTerm[]) => [
  KEY.collection,
  KEY.docId,
  KEY.version,
  KEY.textPoint,
  ...orderBy.map((t) => metadataKey(t.field)),
];
const leanHeadOf = (point: Schemas["Record"]) => headOf({ ...point, payload: { [KEY.metadata]: {}, ...point.payload } });

/** The reference order: ORDERBY terms, then collection and id. */
const compareHeads = (a: DocumentHead, b: DocumentHead, orderBy: readonly OrderTerm[]) =>
  compareForOrder(a.metadata, b.metadata, orderBy) || compareCodePoints(a.collection, b.collection) || compareCodePoints(a.docId, b.docId);

/**
 * The SearchIndex on Qdrant (layout in schema.ts, requests in query.ts and write.ts). Filters
 * compile to Qdrant's (filter/qdrant.ts); when the compiled filter may let through points the
 * reference evaluator rejects, candidates are checked with `evaluate` and more are fetched
 * until enough pass or none are left (deeper.ts), so the answer is the evaluator's.
 */
export class QdrantSearchIndex implements SearchIndex {
  readonly #client: QdrantApi;
  readonly #name: string;
  readonly #dimensions: number | null;
  readonly #scrollPage: number;
  readonly #placement: Placement;
  readonly #fusion: HybridFusion;
  /** The dense vector size of the collection as it exists (it may predate the configuration). */
  #denseSize: number | null;
  #ready: Promise<void> | null = null;

  constructor(options: QdrantIndexOptions) {
    this.#client = options.client ?? createQdrantClient({ url: options.url ?? "http://127.0.0.1:6333", apiKey: options.apiKey });
    this.#name = options.collectionName ?? DEFAULT_COLLECTION;
    this.#dimensions = options.dimensions;
    this.#denseSize = options.dimensions;
    this.#scrollPage = options.scrollPage ?? 512;
    this.#placement = { shards: options.shards ?? 1, replicationFactor: options.replicationFactor ?? 1 };
    this.#fusion = options.fusion ?? DEFAULT_FUSION;
    createCollectionRequest(options.dimensions, this.#placement); // validates them now rather than on first use
  }

  async #call<T>(action: string, send: (client: QdrantApi, name: string) => Promise<T>): Promise<T> {
    try {
      return await send(this.#client, this.#name);
    } catch (err) {
      throw qdrantError(action, err);
    }
  }

  /** Creates the collection and any missing payload index once per process (again after a failure). */
  #ensure(): Promise<void> {
    this.#ready ??= prepareCollection(this.#client, this.#name, this.#dimensions, this.#placement).then(
      (size) => {
        this.#denseSize = size;
      },
      (err: unknown) => {
        this.#ready = null;
        throw err;
      },
    );
    return this.#ready;
  }

  #checkSize(length: number): void {
    if (length !== this.#denseSize) throw collectionDimensionMismatch(this.#name, this.#denseSize, length);
  }

  async indexDocuments(items: Item[]): Promise<boolean[]> {
    if (items.length === 0) return [];
    await this.#ensure();
    for (const { chunks } of items) for (const chunk of chunks) if (chunk.vector) this.#checkSize(chunk.vector.length);
    // Within the batch, a document's highest version alone is written.
    const accepted = acceptHighest(items);
    const chosen = items.filter((_, i) => accepted[i]);
    // write.ts: the chunks, then one request with the document points and the removal of what
    // they supersede.
    const points = chosen.map(({ doc, chunks }) => versionPoints(doc, chunks));
    for (const batch of upsertBatches(points.flatMap((p) => p.chunks))) {
      await this.#call("write points", (c, name) => c.upsert(name, { wait: true, points: batch }));
    }
    const documents = upsertBatches(points.map((p) => p.document));
    for (const batch of documents.slice(0, -1))
      await this.#call("write points", (c, name) => c.upsert(name, { wait: true, points: batch }));
    const superseded = supersededFilter(
      chosen.map(({ doc, chunks }, i) => ({ ...doc, chunks: chunkCount(chunks), onePoint: points[i]!.chunks.length === 0 })),
    );
    const operations: Schemas["UpdateOperation"][] = [{ upsert: { points: documents.at(-1)! } }, { delete: { filter: superseded } }];
    await this.#call("commit a version", (c, name) => c.batchUpdate(name, { wait: true, operations }));
    // A newer version written before (or while) this one: this one goes again. Until it has
    // gone, readers keep the newer one.
    const after = await this.#versions(chosen.map((i) => i.doc));
    for (const [i, { doc }] of items.entries()) {
      if (!accepted[i] || !supersededIn(after, doc)) continue;
      await this.#delete(documentFilter(doc.collection, doc.docId, doc.version));
      accepted[i] = false;
    }
    return accepted;
  }

  async refreshDocument(doc: Omit<IndexedDocument, "text"> & { sha256: string }): Promise<number | null> {
    await this.#ensure();
    const points = await this.#scrollAll(documentFilter(doc.collection, doc.docId), { include: [KEY.kind, KEY.version, "sha256"] });
    const head = points.find((p) => isKind(p.payload, KIND.document));
    if (!head || head.payload?.sha256 !== doc.sha256 || Number(head.payload?.[KEY.version]) > doc.version) return null;
    const committed = [KIND.chunk, KIND.document].map((kind) => ({ key: KEY.kind, match: { value: kind } }));
    const payload = { [KEY.version]: doc.version, [KEY.metadata]: doc.metadata, ...derivedLists(doc.metadata) };
    await this.#call("refresh metadata", (c, name) =>
      c.batchUpdate(name, {
        wait: true,
        operations: [{ set_payload: { payload, filter: { ...documentFilter(doc.collection, doc.docId), should: committed } } }],
      }),
    );
    return points.filter((p) => isKind(p.payload, KIND.chunk)).length;
  }

  /** The committed version of each document that has one. */
  async #versions(docs: Pick<IndexedDocument, "collection" | "docId">[]): Promise<Map<string, number>> {
    const points = await this.#scrollAll(versionsFilter(docs), VERSION_PAYLOAD);
    return newestVersions(
      points.map(({ payload }) => ({
        collection: String(payload?.[KEY.collection]),
        docId: String(payload?.[KEY.docId]),
        version: Number(payload?.[KEY.version]),
      })),
    );
  }

  async #scrollAll(filter: Schemas["Filter"], payload?: Schemas["WithPayloadInterface"]): Promise<Schemas["Record"][]> {
    const records: Schemas["Record"][] = [];
    for await (const page of this.#scrollPages(filter, this.#scrollPage, payload)) records.push(...page);
    return records;
  }

  /** The points a filter matches, a page at a time, in id order; each page a request of its own. */
  async *#scrollPages(
    filter: Schemas["Filter"],
    size: number,
    payload?: Schemas["WithPayloadInterface"],
  ): AsyncGenerator<Schemas["Record"][]> {
    let offset: Schemas["ExtendedPointId"] | null = null;
    do {
      const request = scrollRequest(filter, offset, size, payload);
      const page = await this.#call("scroll", (c, name) => c.scroll(name, request));
      yield page.points;
      const next = page.next_page_offset;
      offset = typeof next === "string" || typeof next === "number" ? next : null;
    } while (offset !== null);
  }

  /**
   * Document points a page at a time (id order, so a document whose two versions are both
   * committed for a moment may appear twice), then the page's chunk points, to count them.
   * With `docIds`, every document point of those documents is read before answering, so each
   * document appears once, with its newest version.
   */
  async *inventory(scope: InventoryScope, batch: number): AsyncGenerator<IndexEntry[]> {
    await this.#ensure();
    const size = Math.max(1, Math.trunc(batch));
    const heads = (points: Schemas["Record"][]) =>
      points.map((p) => ({
        collection: String(p.payload?.[KEY.collection]),
        docId: String(p.payload?.[KEY.docId]),
        version: Number(p.payload?.[KEY.version]),
      }));
    if (scope.docIds) {
      if (scope.collection === null) throw new Error("inventory: docIds need a collection");
      const ids = [...new Set(scope.docIds)];
      for (let i = 0; i < ids.length; i += size) {
        const filter = inventoryFilter(KIND.document, scope.collection, ids.slice(i, i + size));
        const entries = await this.#countChunks(heads(await this.#scrollAll(filter, VERSION_PAYLOAD)));
        if (entries.length > 0) yield entries;
      }
      return;
    }
    for await (const page of this.#scrollPages(inventoryFilter(KIND.document, scope.collection), size, VERSION_PAYLOAD)) {
      const entries = await this.#countChunks(heads(page));
      if (entries.length > 0) yield entries;
    }
  }

  /** One entry per document (its newest version among `heads`), with its committed chunk points of any version counted. */
  async #countChunks(heads: { collection: string; docId: string; version: number }[]): Promise<IndexEntry[]> {
    const entries = new Map<string, IndexEntry>();
    for (const h of heads) {
      const key = docKey(h.collection, h.docId);
      const entry = entries.get(key);
      if (!entry) entries.set(key, { ...h, chunks: 0 });
      else entry.version = Math.max(entry.version, h.version);
    }
    for (const [collection, docs] of Map.groupBy(entries.values(), (e) => e.collection)) {
      const filter = inventoryFilter(
        KIND.chunk,
        collection,
        docs.map((d) => d.docId),
      );
      for (const p of await this.#scrollAll(filter, [KEY.docId])) {
        const entry = entries.get(docKey(collection, String(p.payload?.[KEY.docId])));
        if (entry) entry.chunks += 1;
      }
    }
    return [...entries.values()];
  }

  async #delete(filter: Schemas["Filter"]): Promise<void> {
    await this.#call("delete points", (c, name) => c.delete(name, { wait: true, filter }));
  }

  async deleteDocument(collection: string, docId: string, version?: number): Promise<void> {
    await this.#ensure();
    await this.#delete(documentFilter(collection, docId, version));
  }

  async deleteCollection(collection: string): Promise<void> {
    await this.#ensure();
    await this.#delete(collectionFilter(collection));
  }

  async search(request: SearchRequest): Promise<SearchHit[]> {
    const terms = queryTerms(request.query);
    const compiled = compileFilter(request.filter);
    const filter = scopeFilter(KIND.chunk, request.collections, compiled.condition);
    const ranking = rankers(terms.length > 0 ? queryVector(terms) : undefined, request.vector, this.#fusion);
    if (filter === null || ranking.length === 0 || request.k < 1) return [];
    await this.#ensure();
    if (request.vector) this.#checkSize(request.vector.length);
    const k = request.k;
    // An answer keeps each document's highest version (write.ts): when that leaves out points,
    // it is asked again, deeper, until k remain or no more match.
    if (compiled.exact) {
      const [kept] = await fetchUntilKept({
        want: k,
        first: firstDepth(k, true),
        fetch: async (limit) => [
          (
            await this.#call("search", (c, name) =>
              c.query(name, searchRequest(ranking, filter, limit, Math.max(limit, this.#fusion.depth))),
            )
          ).points,
        ],
        keep: ([points]) => [newestOnly(points!).kept],
      });
      return kept!.map(hitOf);
    }
    // Qdrant's filter lets through a superset: check each ranking's candidates with the
    // evaluator, fetching deeper until each has enough or has no more, then fuse what passed,
    // as Qdrant would have fused exactly filtered prefetches.
    const depth = Math.max(k, this.#fusion.depth);
    const want = ranking.length === 1 ? k : depth;
    const keep = (p: Point) => evaluate(request.filter, metadataOf(p.payload));
    const kept = await fetchUntilKept({
      want,
      first: firstDepth(want, false),
      fetch: async (limit) =>
        (await this.#call("search", (c, name) => c.queryBatch(name, rankingBatch(ranking, filter, limit)))).map((l) => l.points),
      keep: (lists) => {
        // The newest version of a document among every list, so that two lists never show two versions.
        const newest = new Set(newestOnly(lists.flat()).kept);
        return lists.map((points) => points.filter((p) => newest.has(p) && keep(p)));
      },
    });
    if (kept.length === 1) return kept[0]!.slice(0, k).map(hitOf);
    const fused = reciprocalRankFusion(
      kept,
      (p) => String(p.id),
      RRF_K,
      ranking.map((r) => r.weight),
    ).slice(0, k);
    return fused.map(({ item, score }) => hitOf({ ...item, score }));
  }

  async findDocuments(request: FindRequest): Promise<IndexedDocument[]> {
    if (request.limit < 1) return [];
    const ordered = await this.#orderedPage(request);
    if (ordered) return this.#withTexts(ordered.heads, true, ordered.read);
    const { heads, lean } = await this.#sortedHeads(request);
    return this.#withTexts(heads.slice(request.offset, request.offset + request.limit), lean);
  }

  /**
   * A page through Qdrant's order_by, when the filter is exact and the first ORDERBY field is a
   * known integer or instant (range-indexed; one value of one type in every document that has
   * it, so Qdrant's order is the reference's): the first offset + limit documents having the
   * field, then every document tied with the last of them when one past them is (ties are ordered
   * by the later terms, then collection and id, here), or, when fewer have the field, the documents without it,
   * which sort last. The first page is read whole, texts included (`read`, by point id): one
   * request for the common lookup; later pages and ties are read lean. Null where that does not
   * apply, or when a document shows two versions (a write in progress): every match is then read.
   */
  async #orderedPage(request: FindRequest): Promise<{ heads: DocumentHead[]; read: Map<string, Payload> } | null> {
    const [first] = request.filter.orderBy;
    const compiled = compileFilter(request.filter);
    if (!first || !compiled.exact || !ORDERABLE.has(first.field)) return null;
    const filter = scopeFilter(KIND.document, request.collections, compiled.condition);
    if (filter === null) return { heads: [], read: new Map() };
    await this.#ensure();
    const key = metadataKey(first.field);
    const want = request.offset + request.limit;
    const payload = leanPayload(request.filter.orderBy);
    const must = filter.must as Schemas["Condition"][];
    const order = { key, direction: first.descending ? "desc" : "asc" } as const;
    const firstPayload = request.offset === 0 ? WHOLE_PAYLOAD : payload;
    // One more than the page: when it is not tied with the page's last, no document past the page is.
    const { points } = await this.#call("scroll", (c, name) =>
      c.scroll(name, { filter, limit: want + 1, with_payload: firstPayload, with_vector: false, order_by: order }),
    );
    const valueOf = (p: Schemas["Record"]) => (p.payload?.[KEY.metadata] as Record<string, unknown> | undefined)?.[first.field];
    let found: Schemas["Record"][];
    if (points.length > want) {
      const last = valueOf(points[want - 1]!) as number | string;
      if (valueOf(points[want]!) !== last) found = points.slice(0, want);
      else {
        const ties = await this.#scrollAll({ must: [...must, { key, range: { gte: last, lte: last } as Schemas["Range"] }] }, payload);
        found = [...points.filter((p) => valueOf(p) !== last), ...ties];
      }
    } else if (points.length === want) {
      // Exactly a page has the field: those without it sort after them.
      found = points;
    } else {
      found = [...points, ...(await this.#scrollAll({ must: [...must, { is_empty: { key } }] }, payload))];
    }
    // A point read whole in the first request is shown from it (a tie read again lean included).
    const read = new Map(firstPayload === payload ? [] : points.map((p) => [String(p.id), p.payload ?? {}]));
    const heads = found.map((p) => (read.has(String(p.id)) ? headOf({ id: p.id, payload: read.get(String(p.id)) }) : leanHeadOf(p)));
    if (new Set(heads.map((h) => docKey(h.collection, h.docId))).size < heads.length) return null;
    return { heads: heads.sort((a, b) => compareHeads(a, b, request.filter.orderBy)).slice(request.offset, want), read };
  }

  /** Every match's head is held while sorting (no text); texts are read a batch at a time. */
  async *scanDocuments(request: ScanRequest): AsyncGenerator<IndexedDocument[]> {
    const { heads, lean } = await this.#sortedHeads(request);
    const size = Math.max(1, request.batch);
    for (let i = 0; i < heads.length; i += size) yield await this.#withTexts(heads.slice(i, i + size), lean);
  }

  /**
   * The latest head of every matching document, in the reference order (ORDERBY terms, then
   * collection and id). Every match is read and sorted here; when Qdrant's filter is exact, a
   * head carries only the ORDERBY fields of its metadata, and the page's own heads are read
   * whole with their texts.
   */
  async #sortedHeads(request: Pick<FindRequest, "collections" | "filter">): Promise<{ heads: DocumentHead[]; lean: boolean }> {
    const compiled = compileFilter(request.filter);
    const filter = scopeFilter(KIND.document, request.collections, compiled.condition);
    if (filter === null) return { heads: [], lean: false };
    await this.#ensure();
    const lean = compiled.exact;
    const latest = new Map<string, DocumentHead>();
    for (const point of await this.#scrollAll(filter, lean ? leanPayload(request.filter.orderBy) : HEAD_PAYLOAD)) {
      const head = lean ? leanHeadOf(point) : headOf(point);
      const key = docKey(head.collection, head.docId);
      if ((latest.get(key)?.version ?? -Infinity) < head.version) latest.set(key, head);
    }
    const heads = [...latest.values()]
      .filter((head) => lean || evaluate(request.filter, head.metadata))
      .sort((a, b) => compareHeads(a, b, request.filter.orderBy));
    return { heads, lean };
  }

  /**
   * The page's documents with their texts: taken from `read` (points already read whole, their
   * heads whole too), the others read now, with their whole metadata for lean heads.
   */
  async #withTexts(page: DocumentHead[], lean: boolean, read = new Map<string, Payload>()): Promise<IndexedDocument[]> {
    const hasText = (id: string | number) => typeof read.get(String(id))?.[KEY.text] === "string";
    const missing = page.filter((h) => !hasText(h.textId)).map((h) => h.textId);
    const byId = new Map<string, { payload: Payload | null | undefined; lean: boolean }>();
    for (const [id, payload] of read) byId.set(id, { payload, lean: false });
    if (missing.length > 0) {
      const records = await this.#call("read texts", (c, name) => c.retrieve(name, textRequest(missing, lean)));
      for (const r of records) byId.set(String(r.id), { payload: r.payload, lean });
    }
    return page.flatMap(({ textId, collection, docId, version, metadata }) => {
      const found = byId.get(String(textId));
      const text = found?.payload?.[KEY.text];
      if (typeof text !== "string") return [];
      return [{ collection, docId, version, metadata: found!.lean ? metadataOf(found!.payload) : metadata, text }];
    });
  }

  /** The committed points of the document; the newest committed head names the version shown. */
  async documentChunks(collection: string, docId: string): Promise<DocumentChunks | null> {
    await this.#ensure();
    const base = documentFilter(collection, docId);
    const committed = { key: KEY.kind, match: { any: [KIND.chunk, KIND.document] } };
    const payload = [KEY.kind, KEY.version, KEY.chunkIndex, KEY.text, "start", "end", "cite"];
    const points = await this.#scrollAll({ must: [...(base.must as Schemas["Condition"][]), committed] }, payload);
    const heads = points.filter((p) => isKind(p.payload, KIND.document)).map((p) => Number(p.payload?.[KEY.version]));
    if (heads.length === 0) return null;
    const version = Math.max(...heads);
    const chunks = points
      .filter((p) => isKind(p.payload, KIND.chunk) && Number(p.payload?.[KEY.version]) === version)
      .map((p) => storedChunkOf(p.payload))
      .sort((a, b) => a.chunkIndex - b.chunkIndex);
    return { version, chunks };
  }

  async ping(): Promise<void> {
    await this.#call("ping", (c) => c.versionInfo());
  }

  async close(): Promise<void> {
    // The client holds no connection that needs closing.
  }
}
