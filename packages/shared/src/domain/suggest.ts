import { distance } from "fastest-levenshtein";

/**
 * The known name closest to `given` by edit distance, when it is close enough to be the one
 * meant: at most a third of the longer name's length (and at least one edit), e.g.
 * `collection_name` → `collection_names`, `metdata` → `metadata`, `stauts` → `status`.
 * Case is ignored for the comparison; ties go to the earlier name in `known`.
 */
export function closestName(given: string, known: Iterable<string>): string | undefined {
  const lower = given.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of known) {
    if (name === given) continue;
    const d = distance(lower, name.toLowerCase());
    const allowed = Math.max(1, Math.floor(Math.max(given.length, name.length) / 3));
    if (d <= allowed && d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}
