/**
 * Test support: an in-memory stand-in for the few Qdrant endpoints the adapter calls, so the
 * adapter's own logic (writes in order, version checks, post-filtering, paging, fusion)
 * runs here, where no Qdrant can. It is not Qdrant: it implements the documented semantics
 * the adapter relies on (filters per qdrant-interpret.ts, sparse dot product times Qdrant's IDF,
 * cosine for dense, RRF with Qdrant's formula, scroll in id order) and refuses requests outside them.
 * Where it differed from Qdrant 1.18 it was made to follow it (payloads as the client parses
 * them, IDF statistics that keep deleted points, unpaired surrogates refused);
 * src/index/qdrant/stand-in.test.ts compares the two where a real Qdrant is given. Among
 * results with equal scores its order (by id) is not Qdrant's, which is its own.
 */
import type { Schemas } from "@qdrant/js-client-rest";
import type { QdrantApi } from "../src/index/qdrant/client.ts";
import { matchesFilter } from "./qdrant-interpret.ts";

type Payload = Record<string, unknown>;
type Vectors = Record<string, number[] | Schemas["SparseVector"]>;
interface Stored {
  id: string;
  payload: Payload;
  vectors: Vectors;
}
interface Collection {
  config: Schemas["CreateCollection"];
  indexes: Record<string, Schemas["PayloadIndexInfo"]>;
  points: Map<string, Stored>;
  /**
   * The vectors Qdrant's IDF counts: a deleted point's stay (Qdrant only marks it deleted; they
   * go when its optimizer rebuilds the segment, which this stand-in never does), and a point
   * written again over a live one replaces it. Observed on Qdrant 1.18 with small collections.
   */
  statistics: Stored[];
}

/** What the client throws for an HTTP error: an Error with the response's status. */
export class FakeApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const done: Schemas["UpdateResult"] = { operation_id: 0, status: "completed" };

export class FakeQdrant implements QdrantApi {
  readonly collections = new Map<string, Collection>();
  /** Every call, for tests that check what was sent. */
  readonly calls: { method: string; args: unknown }[] = [];

  #get(name: string): Collection {
    const c = this.collections.get(name);
    if (!c) throw new FakeApiError(404, `Collection \`${name}\` doesn't exist!`);
    return c;
  }

  #log(method: string, args: unknown) {
    this.calls.push({ method, args: structuredClone(args) });
    // Qdrant's JSON parser refuses the escapes JSON.stringify writes for unpaired surrogates.
    if (!wellFormed(args)) throw new FakeApiError(400, "Format error in JSON body: unexpected end of hex escape");
  }

  getCollection: QdrantApi["getCollection"] = async (name) => {
    const c = this.#get(name);
    return {
      status: "green",
      segments_count: 1,
      payload_schema: c.indexes,
      config: { params: { vectors: c.config.vectors, sparse_vectors: c.config.sparse_vectors } },
    } as Schemas["CollectionInfo"];
  };

  createCollection: QdrantApi["createCollection"] = async (name, args) => {
    this.#log("createCollection", args);
    if (this.collections.has(name)) throw new FakeApiError(409, `Collection \`${name}\` already exists!`);
    this.collections.set(name, { config: args, indexes: {}, points: new Map(), statistics: [] });
    return true;
  };

  /** Only the sparse vectors' parameters, merged as Qdrant merges them. */
  updateCollection: QdrantApi["updateCollection"] = async (name, args) => {
    this.#log("updateCollection", args);
    const c = this.#get(name);
    type Sparse = Record<string, Schemas["SparseVectorParams"]>;
    const { sparse_vectors: sparse, ...rest } = args as { sparse_vectors?: Sparse };
    if (Object.keys(rest).length > 0) throw new FakeApiError(400, `updates other than sparse_vectors are not supported here`);
    const all = (c.config.sparse_vectors ?? {}) as Sparse;
    for (const [vector, params] of Object.entries(sparse ?? {})) {
      const current = all[vector];
      if (!current) throw new FakeApiError(400, `Wrong input: Not existing vector name error: ${vector}`);
      all[vector] = { ...current, ...params, index: { ...current.index, ...params.index } };
    }
    return true;
  };

  createPayloadIndex: QdrantApi["createPayloadIndex"] = async (name, args) => {
    this.#log("createPayloadIndex", args);
    const schema = args.field_schema;
    const type = typeof schema === "string" ? schema : (schema as { type: Schemas["PayloadSchemaType"] }).type;
    this.#get(name).indexes[args.field_name] = {
      data_type: type,
      ...(typeof schema === "object" ? { params: schema } : {}),
      points: 0,
    } as Schemas["PayloadIndexInfo"];
    return done;
  };

  upsert: QdrantApi["upsert"] = async (name, args) => {
    this.#log("upsert", args);
    if (!("points" in args)) throw new FakeApiError(400, "batch upserts are not supported here");
    this.#write(this.#get(name), args.points);
    return done;
  };

  #write(c: Collection, points: Schemas["PointStruct"][]) {
    for (const p of points) {
      const vectors = structuredClone(p.vector) as Vectors;
      if (Array.isArray(vectors)) throw new FakeApiError(400, "the collection has named vectors only");
      for (const [vname, v] of Object.entries(vectors)) {
        const dense = (c.config.vectors as Record<string, Schemas["VectorParams"]>)[vname];
        const sparse = c.config.sparse_vectors?.[vname];
        if (Array.isArray(v) ? dense?.size !== v.length : !sparse || new Set(v.indices).size !== v.indices.length) {
          throw new FakeApiError(400, `bad vector ${vname}`);
        }
      }
      const stored = { id: String(p.id), payload: asStored(p.payload ?? {}), vectors };
      const live = c.points.get(stored.id);
      if (live) c.statistics[c.statistics.indexOf(live)] = stored;
      else c.statistics.push(stored);
      c.points.set(stored.id, stored);
    }
  }

  batchUpdate: QdrantApi["batchUpdate"] = async (name, args) => {
    this.#log("batchUpdate", args);
    const c = this.#get(name);
    return args.operations.map((op) => {
      if ("delete" in op) this.#remove(c, op.delete);
      else if ("upsert" in op && "points" in op.upsert) this.#write(c, op.upsert.points);
      else if ("set_payload" in op && op.set_payload.filter) {
        for (const p of this.#select(c, op.set_payload.filter)) Object.assign(p.payload, asStored(op.set_payload.payload));
      } else throw new FakeApiError(400, `unsupported operation ${JSON.stringify(op)}`);
      return done;
    });
  };

  delete: QdrantApi["delete"] = async (name, args) => {
    this.#log("delete", args);
    this.#remove(this.#get(name), args);
    return done;
  };

  #remove(c: Collection, selector: Schemas["PointsSelector"]) {
    const doomed = "filter" in selector ? this.#select(c, selector.filter) : selector.points.map((id) => c.points.get(String(id)));
    for (const p of doomed) if (p) c.points.delete(p.id);
  }

  #select(c: Collection, filter: Schemas["Filter"] | Record<string, unknown> | null | undefined): Stored[] {
    return [...c.points.values()]
      .filter((p) => !filter || matchesFilter(filter as Schemas["Filter"], p.payload))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  query: QdrantApi["query"] = async (name, args) => {
    this.#log("query", args);
    return { points: this.#query(this.#get(name), args) };
  };

  queryBatch: QdrantApi["queryBatch"] = async (name, args) => {
    this.#log("queryBatch", args);
    const c = this.#get(name);
    return args.searches.map((search) => ({ points: this.#query(c, search) }));
  };

  #query(c: Collection, q: Schemas["QueryRequest"] | Schemas["Prefetch"]): Schemas["ScoredPoint"][] {
    const candidates = this.#select(c, q.filter);
    let ranked: { point: Stored; score: number }[];
    if (q.prefetch) {
      const prefetches = Array.isArray(q.prefetch) ? q.prefetch : [q.prefetch as Schemas["Prefetch"]];
      const { k, weights } = rrfOf(q.query, prefetches.length);
      const scores = new Map<string, { point: Stored; score: number }>();
      prefetches
        .map((p) => this.#query(c, p))
        .forEach((list, l) => {
          const weight = weights?.[l] ?? 1;
          list.forEach((sp, rank) => {
            const entry = scores.get(String(sp.id)) ?? { point: c.points.get(String(sp.id))!, score: 0 };
            // Qdrant's weighted RRF: 1 / ((rank + 1) / weight + k - 1), rank from 0.
            entry.score += weight > 0 ? 1 / ((rank + 1) / weight + k - 1) : 0;
            scores.set(String(sp.id), entry);
          });
        });
      const allowed = new Set(candidates.map((p) => p.id));
      ranked = [...scores.values()].filter((e) => allowed.has(e.point.id));
    } else {
      ranked = this.#nearest(c, candidates, q.query, q.using);
    }
    ranked.sort((a, b) => b.score - a.score || (a.point.id < b.point.id ? -1 : 1));
    const withPayload = "with_payload" in q ? q.with_payload : undefined;
    return ranked.slice(0, q.limit ?? 10).map(({ point, score }) => ({
      id: point.id,
      version: 0,
      score,
      payload: select(point.payload, withPayload ?? false),
    }));
  }

  #nearest(c: Collection, candidates: Stored[], query: unknown, using: string | null | undefined) {
    const name = using ?? "";
    if (Array.isArray(query)) {
      return candidates.flatMap((point) => {
        const v = point.vectors[name];
        return Array.isArray(v) ? [{ point, score: cosine(v, query as number[]) }] : [];
      });
    }
    const q = query as Schemas["SparseVector"];
    if (!q?.indices || c.config.sparse_vectors?.[name]?.modifier !== "idf")
      throw new FakeApiError(400, "expected a sparse query on an IDF vector");
    // Qdrant's IDF over the points that have this sparse vector, deleted ones included (see
    // `statistics`): ln(1 + (N - n + 0.5) / (n + 0.5)).
    const all = c.statistics.flatMap((p) => sparseOf(p, name));
    const idf = q.indices.map((i) => {
      const n = all.filter((v) => v.indices.includes(i)).length;
      return Math.log(1 + (all.length - n + 0.5) / (n + 0.5));
    });
    return candidates.flatMap((point) =>
      sparseOf(point, name).flatMap((v) => {
        const shared = q.indices.flatMap((index, i) => (v.indices.includes(index) ? [i] : []));
        const score = shared.reduce((sum, i) => sum + q.values[i]! * v.values[v.indices.indexOf(q.indices[i]!)]! * idf[i]!, 0);
        return shared.length > 0 ? [{ point, score }] : [];
      }),
    );
  }

  scroll: QdrantApi["scroll"] = async (name, args = {}) => {
    this.#log("scroll", args);
    const c = this.#get(name);
    if (args.order_by) return orderedScroll(c, this.#select(c, args.filter), args);
    const points = this.#select(c, args.filter);
    const start = args.offset == null ? 0 : points.findIndex((p) => p.id >= String(args.offset));
    const page = start < 0 ? [] : points.slice(start, start + (args.limit ?? 10));
    const next = start < 0 ? undefined : points[start + (args.limit ?? 10)];
    return {
      points: page.map((p) => ({ id: p.id, payload: select(p.payload, args.with_payload ?? true) })),
      next_page_offset: next ? next.id : null,
    };
  };

  retrieve: QdrantApi["retrieve"] = async (name, args) => {
    this.#log("retrieve", args);
    const c = this.#get(name);
    return args.ids.flatMap((id) => {
      const p = c.points.get(String(id));
      return p ? [{ id: p.id, payload: select(p.payload, args.with_payload ?? true) }] : [];
    });
  };

  versionInfo: QdrantApi["versionInfo"] = async () => ({ title: "in-memory stand-in", version: "0.0.0" });
}

function sparseOf(point: Stored, name: string): Schemas["SparseVector"][] {
  const v = point.vectors[name];
  return v && !Array.isArray(v) ? [v] : [];
}

function cosine(a: number[], b: number[]): number {
  const dot = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * (y[i] ?? 0), 0);
  return dot(a, b) / (Math.sqrt(dot(a, a) * dot(b, b)) || 1);
}

/** `{ fusion: "rrf" }` (k = 2) or `{ rrf: { k, weights? } }`, one weight per prefetch. */
function rrfOf(query: unknown, prefetches: number): { k: number; weights?: number[] } {
  if (JSON.stringify(query) === JSON.stringify({ fusion: "rrf" })) return { k: 2 };
  const rrf = (query as { rrf?: { k?: unknown; weights?: unknown } } | null)?.rrf;
  const k = rrf?.k;
  if (!(typeof k === "number" && Number.isInteger(k) && k >= 1))
    throw new FakeApiError(400, `only RRF fusion is supported here, got ${JSON.stringify(query)}`);
  const weights = rrf?.weights;
  if (weights === undefined || weights === null) return { k };
  if (!Array.isArray(weights) || !weights.every((w) => typeof w === "number"))
    throw new FakeApiError(400, `RRF weights must be numbers, got ${JSON.stringify(weights)}`);
  if (weights.length !== prefetches) {
    throw new FakeApiError(
      400,
      `Number of weights in RRF should match number of pre-fetches: got ${weights.length}, expected ${prefetches}`,
    );
  }
  return { k, weights };
}

function wellFormed(value: unknown): boolean {
  if (typeof value === "string") return value.isWellFormed();
  if (typeof value !== "object" || value === null) return true;
  return Object.entries(value).every(([k, v]) => k.isWellFormed() && wellFormed(v));
}

/** A payload as Qdrant keeps it: JSON (so -0 is 0, undefined keys are gone). */
function asStored(payload: unknown): Payload {
  return JSON.parse(JSON.stringify(payload)) as Payload;
}

/**
 * A payload as the client hands it back: a copy, numbers as JS numbers (the client parses
 * answers as plain JSON, patches/). Qdrant writes back as integers only the digits that fit an
 * i64 or a u64, and others as it kept them, as floats: the same numbers once parsed.
 */
function asReturned(payload: Payload): Payload {
  return JSON.parse(JSON.stringify(payload)) as Payload;
}

function select(payload: Payload, how: unknown): Payload | null {
  if (how === false) return null;
  const copy = asReturned(payload);
  if (how === true) return copy;
  if (Array.isArray(how)) return pick(copy, how as string[]);
  const { include, exclude } = how as { include?: string[]; exclude?: string[] };
  if (include) return pick(copy, include);
  if (exclude) return Object.fromEntries(Object.entries(copy).filter(([k]) => !exclude.includes(k)));
  throw new FakeApiError(400, `unsupported with_payload ${JSON.stringify(how)}`);
}

/**
 * The payload keys asked for, a dotted key as a path into objects: Qdrant answers
 * `metadata.created` with `{ metadata: { created } }`, and `{ metadata: {} }` when the object
 * lacks the key.
 */
function pick(payload: Payload, keys: readonly string[]): Payload {
  const out: Payload = {};
  for (const key of keys) {
    const path = key.split(".");
    let from: unknown = payload;
    let to = out;
    for (const [i, step] of path.entries()) {
      if (typeof from !== "object" || from === null || Array.isArray(from) || !Object.hasOwn(from, step)) break;
      from = (from as Payload)[step];
      if (i === path.length - 1) to[step] = from;
      else to = (to[step] ??= {}) as Payload;
    }
  }
  return out;
}

/**
 * Scroll with `order_by`, as Qdrant 1.18 answers it: only points holding a value of the
 * range-indexed key, by that value (a datetime as its instant), ties in an order of its own (here
 * by id), no next page; a key without a range index is refused.
 */
function orderedScroll(c: Collection, selected: Stored[], args: Schemas["ScrollRequest"]): Schemas["ScrollResult"] {
  const by = args.order_by!;
  const { key, direction = "asc" }: { key: string; direction?: string | null } =
    typeof by === "string" ? { key: by } : (by as { key: string; direction?: string | null });
  const type = c.indexes[key]?.data_type;
  if (type !== "integer" && type !== "float" && type !== "datetime")
    throw new FakeApiError(400, `No range index for \`order_by\` key: \`${key}\``);
  const valueOf = (p: Stored): number | undefined => {
    let v: unknown = p.payload;
    for (const step of key.split(".")) v = typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Payload)[step] : undefined;
    if (type === "datetime") return typeof v === "string" && !Number.isNaN(Date.parse(v)) ? Date.parse(v) * 1000 : undefined;
    return typeof v === "number" ? v : undefined;
  };
  const sign = direction === "desc" ? -1 : 1;
  const ordered = selected
    .flatMap((p) => {
      const value = valueOf(p);
      return value === undefined ? [] : [{ p, value }];
    })
    .sort((a, b) => sign * (a.value - b.value) || (a.p.id < b.p.id ? -1 : 1))
    .slice(0, args.limit ?? 10);
  return {
    points: ordered.map(({ p, value }) => ({ id: p.id, payload: select(p.payload, args.with_payload ?? true), order_value: value })),
    next_page_offset: null,
  };
}
