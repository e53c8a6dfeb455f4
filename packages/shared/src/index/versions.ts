/**
 * What both index adapters (lancedb.ts, qdrant/search-index.ts) decide alike about documents'
 * versions: a document's key, the newest version of each, and which items of a batch given to
 * SearchIndex.indexDocuments are accepted.
 */
import type { SearchIndex } from "../ports.ts";

/** One item of SearchIndex.indexDocuments: a document's version and its chunks. */
export type IndexItem = Parameters<SearchIndex["indexDocuments"]>[0][number];

export interface DocumentKey {
  collection: string;
  docId: string;
}

type Versioned = DocumentKey & { version: number };

/** A document's key, as a Map or Set key. */
export function docKey(collection: string, docId: string): string {
  return JSON.stringify([collection, docId]);
}

export const keyOf = (d: DocumentKey): string => docKey(d.collection, d.docId);

/** The highest version of each document among `found`, by docKey. */
export function newestVersions(found: Iterable<Versioned>): Map<string, number> {
  const versions = new Map<string, number>();
  for (const v of found) {
    const key = keyOf(v);
    versions.set(key, Math.max(versions.get(key) ?? -Infinity, v.version));
  }
  return versions;
}

/** Whether `versions` (by docKey) holds a newer version of the document than `doc`'s: an item refused. */
export function supersededIn(versions: ReadonlyMap<string, number>, doc: Versioned): boolean {
  return (versions.get(keyOf(doc)) ?? -Infinity) > doc.version;
}

/**
 * Checked before writing (LanceDB): the batch as if applied one item at a time on top of
 * `indexed` (the versions the index holds, by docKey; it is updated). An item older than what is
 * indexed, or than an earlier accepted item of its document, is refused; the last accepted item
 * of each document is the one to write (`latest`, in the order each document first appears).
 */
export function acceptInOrder<T extends { doc: Versioned }>(
  items: readonly T[],
  indexed: Map<string, number>,
): { accepted: boolean[]; latest: T[] } {
  const latest = new Map<string, T>();
  const accepted = items.map((item) => {
    if (supersededIn(indexed, item.doc)) return false;
    const key = keyOf(item.doc);
    indexed.set(key, item.doc.version);
    latest.set(key, item);
    return true;
  });
  return { accepted, latest: [...latest.values()] };
}

/**
 * Checked after writing (Qdrant, see qdrant/write.ts): within the batch, each document's highest
 * version alone is written, once (the first item of that version). What the index holds is
 * compared afterwards, with supersededIn.
 */
export function acceptHighest(items: readonly { doc: Versioned }[]): boolean[] {
  const highest = newestVersions(items.map((i) => i.doc));
  const taken = new Set<string>();
  return items.map(({ doc }) => {
    const key = keyOf(doc);
    if (highest.get(key) !== doc.version || taken.has(key)) return false;
    taken.add(key); // the same version twice: written once
    return true;
  });
}
