/**
 * Unknown parameters are refused, never ignored: a misspelt `collection_name` would otherwise
 * search every collection. Each message names the key and, when one is close, the right one.
 */
import { BadRequestError, closestName } from "@docstore/shared";

/** Names people reach for that are too far from ours for an edit distance to find. */
const ALIASES: Record<string, readonly string[]> = {
  metadata: ["filter", "filters", "where", "meta"],
  tag_info: ["filter", "filters", "tag", "tags", "where"],
  collection_names: ["collections", "collection", "collection_name"],
  collection_name: ["collection", "collections"],
  k: ["top_k", "topk", "n", "limit", "count"],
  query: ["q", "text", "question"],
  text: ["content", "body", "document"],
  id_value: ["doc_id", "id", "document_id"],
};

export type KeyPlace = "query parameter" | "field" | "form field";

/** The name probably meant by `given`, among `known`. */
export function meant(given: string, known: readonly string[]): string | undefined {
  // `collection_names[]=a` is how qs-style clients (axios) repeat a parameter.
  const bare = given.endsWith("[]") ? given.slice(0, -2) : given.replace(/\[\d*\]$/, "");
  if (bare !== given && known.includes(bare)) return bare;
  for (const name of known) if (ALIASES[name]?.includes(given)) return name;
  return closestName(given, known);
}

/** The message for keys that `known` does not hold. */
export function unknownKeys(
  keys: readonly string[],
  known: readonly string[],
  place: KeyPlace,
  elsewhere?: { names: readonly string[]; place: string },
): string {
  const parts = keys.slice(0, 5).map((key) => {
    if (elsewhere?.names.includes(key)) return `${key}: not read as a ${place} here; send it as a ${elsewhere.place}`;
    const suggestion = meant(key, known);
    const repeat =
      suggestion && key.endsWith("]") ? `; repeat it as ${suggestion}=a&${suggestion}=b, or separate the names with commas` : "";
    return `${key}: unknown ${place}${suggestion ? ` (did you mean '${suggestion}'?)${repeat}` : ""}`;
  });
  const accepted = known.length > 0 ? `accepted ${place}s: ${known.join(", ")}` : `this operation takes no ${place}s`;
  return `${parts.join("; ")}; ${accepted}`;
}

/** Throws a 400 when `given` has a key that `known` does not. */
export function refuseUnknownKeys(
  given: Record<string, unknown>,
  known: readonly string[],
  place: KeyPlace,
  elsewhere?: { names: readonly string[]; place: string },
): void {
  const unknown = Object.keys(given).filter((k) => !known.includes(k));
  if (unknown.length > 0) throw new BadRequestError(unknownKeys(unknown, known, place, elsewhere));
}
