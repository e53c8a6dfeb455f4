import type { Catalog } from "@docstore/shared";

/** How long a set of collections' metadata fields, read from the catalog, is used for warnings. */
export const FIELDS_TTL_MS = 5_000;
/** Sets of collections held at most; the oldest read goes first. */
const MAX_SETS = 1_000;

/**
 * The metadata fields the documents of some collections have, for the filter's warnings about a
 * field no document has (routes/search.ts): read from the catalog at most once every `ttlMs` per
 * set of collections, instead of on every search and tag lookup (a filtered search spent about a
 * tenth of the API's CPU in the two catalog reads at 50,000 documents, docs/benchmarks.md).
 * Fields only join a collection while it exists, so a set held here lacks at most the fields
 * added since it was read: a warning is only given after reading the catalog afresh
 * (`fresh`). A collection deleted through this process is forgotten at once; one deleted and
 * made again through another process within `ttlMs` can leave a field of its old documents
 * here, and a filter naming it goes unwarned until then.
 */
export class KnownFields {
  readonly #catalog: Pick<Catalog, "metadataFields">;
  readonly #ttlMs: number;
  readonly #now: () => number;
  #forgotten = 0;
  readonly #sets = new Map<string, { collections: readonly string[]; until: number; fields: Set<string> }>();

  constructor(catalog: Pick<Catalog, "metadataFields">, { ttlMs = FIELDS_TTL_MS, now = Date.now } = {}) {
    this.#catalog = catalog;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The fields of `collections`, as read at most `ttlMs` ago, or now with `fresh`. */
  async of(collections: readonly string[], { fresh = false } = {}): Promise<ReadonlySet<string>> {
    const key = JSON.stringify(collections);
    const held = this.#sets.get(key);
    if (!fresh && held && held.until > this.#now()) return held.fields;
    const forgotten = this.#forgotten;
    const fields = await this.#catalog.metadataFields(collections);
    // Read while a collection was being forgotten: used for this answer, not kept.
    if (forgotten !== this.#forgotten) return fields;
    this.#sets.delete(key);
    if (this.#sets.size >= MAX_SETS) this.#sets.delete(this.#sets.keys().next().value!);
    this.#sets.set(key, { collections: [...collections], until: this.#now() + this.#ttlMs, fields });
    return fields;
  }

  /** Forgets every set that includes `collection` (it was deleted). */
  forget(collection: string): void {
    this.#forgotten++;
    for (const [key, set] of this.#sets) if (set.collections.includes(collection)) this.#sets.delete(key);
  }
}

const byCatalog = new WeakMap<object, KnownFields>();

/** The KnownFields of a catalog: one per catalog, shared by every route of the process. */
export function knownFields(catalog: Pick<Catalog, "metadataFields">): KnownFields {
  let known = byCatalog.get(catalog);
  if (!known) byCatalog.set(catalog, (known = new KnownFields(catalog)));
  return known;
}
