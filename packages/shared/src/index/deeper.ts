/**
 * The refine-deeper loop of both adapters' searches (lancedb-read.ts, qdrant/search-index.ts).
 * When the engine may return candidates an answer leaves out (rows the reference evaluator
 * rejects, a document's older version, a deletion not yet applied), each ranking is asked again,
 * four times deeper a round, until `want` of its candidates are kept or it has no more.
 */

/** First depth when the engine's filter is not the answer's: candidates are checked here. */
export const MIN_INEXACT_LIMIT = 64;

/** The first depth: `want` when the engine's answer needs no check, else four times it, at least MIN_INEXACT_LIMIT. */
export function firstDepth(want: number, exact: boolean): number {
  return exact ? want : Math.max(MIN_INEXACT_LIMIT, 4 * want);
}

export interface Deeper<T> {
  /** Candidates kept per ranking (the lists returned hold at most this many). */
  want: number;
  /** Depth of the first round. */
  first: number;
  /** Each ranking's candidates at this depth, best first. */
  fetch(limit: number): Promise<T[][]>;
  /** Each list's candidates that the answer keeps, in order (given every list, so a choice may span them). */
  keep(lists: T[][]): T[][];
  /** Whether this round's lists are the answer whatever they hold (asked after each round; default never). */
  final?(): boolean;
  /** The depth after `limit` (default 4 × limit). */
  deeper?(limit: number): number;
}

/** Each ranking's kept candidates, at most `want` of each: fetched deeper until every list has `want`, or has no more. */
export async function fetchUntilKept<T>({ want, first, fetch, keep, final, deeper }: Deeper<T>): Promise<T[][]> {
  for (let limit = first; ; limit = deeper ? deeper(limit) : limit * 4) {
    const lists = await fetch(limit);
    const kept = keep(lists).map((l) => l.slice(0, want));
    if (final?.() || lists.every((l, i) => kept[i]!.length === want || l.length < limit)) return kept;
  }
}
