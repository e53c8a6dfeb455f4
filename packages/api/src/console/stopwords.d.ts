/** Served by ../serve-console.ts from the service's own list (packages/shared/src/search/query-terms.ts). */
export const STOPWORDS: ReadonlySet<string>;
