import {
  BadRequestError,
  FilterSyntaxError,
  UnavailableError,
  decodeCursor,
  encodeCursor,
  filterTypos,
  onlyStopwords,
  parseFilter,
  type Filter,
  type IndexedDocument,
  type Logger,
} from "@docstore/shared";
import { principalOf, visibleTo, type Principal } from "../access.ts";
import { sendJson, streamList } from "../stream.ts";
import { unknownCollections } from "../unknown-collection.ts";
import { citationFields } from "../citations.ts";
import { knownFields } from "../known-fields.ts";
import type { AppContext } from "../context.ts";
import { route, type Input, type Route } from "../route.ts";
import * as s from "../schemas.ts";

/** Documents read from the index per step when a tag lookup is streamed whole. */
const STREAM_BATCH = 100;

/** The filter sent in `field`; a syntax error is a 400 naming its position. */
export function filterOf(text: string | undefined, field: string): Filter {
  try {
    return parseFilter(text ?? "");
  } catch (err) {
    if (err instanceof FilterSyntaxError) throw new BadRequestError(`${field}: ${err.message}`, { position: err.position });
    throw err;
  }
}

/**
 * What in the filter looks like a typo. The fields the collections have are asked only when the
 * filter names some, as recently read (known-fields.ts), and afresh before a warning is given.
 */
export async function typos(ctx: AppContext, filter: Filter, collections: string[], field: string): Promise<string[] | undefined> {
  const names = filter.groups.length > 0 || filter.orderBy.length > 0;
  const known = knownFields(ctx.services.catalog);
  let found = filterTypos(filter, names ? await known.of(collections) : null);
  if (found.length > 0 && names) found = filterTypos(filter, await known.of(collections, { fresh: true }));
  return found.length > 0 ? found.map((w) => `${field}: ${w}`) : undefined;
}

/** The collections named (each must exist), or all those the principal may use. */
async function existing(ctx: AppContext, principal: Principal, names: string[] | undefined): Promise<string[]> {
  const { catalog } = ctx.services;
  if (names === undefined || names.length === 0)
    return visibleTo(
      principal,
      (await catalog.listCollections()).map((c) => c.name),
      (c) => c,
    );
  const unique = [...new Set(names)];
  const missing = [];
  for (const name of unique) if (!(await catalog.collectionExists(name))) missing.push(name);
  if (missing.length > 0) throw await unknownCollections(ctx, principal, missing);
  return unique;
}

/**
 * With an embedder, the query's vector, which makes the search hybrid (BM25 and dense, fused).
 * When the embedding service is unavailable (down, rate limiting, slower than
 * EMBEDDING_QUERY_TIMEOUT_MS), the search goes on with BM25 alone and a warning saying so: the
 * index can still answer, and a 503 would send clients back to an overloaded service. A
 * refusal that no retry can change (a wrong key or model) is still an error (502).
 */
async function queryVector(ctx: AppContext, query: string, log: Logger): Promise<{ vector?: number[]; warning?: string }> {
  const { embedder } = ctx.services;
  if (!embedder) return {};
  try {
    return { vector: (await embedder.embed([query]))[0] };
  } catch (err) {
    if (!(err instanceof UnavailableError)) throw err;
    log.warn({ err: err.message }, "search without the query's embedding");
    return { warning: `query: ranked by BM25 alone, without dense vectors: ${err.message}` };
  }
}

/** Each search is served as a GET and as a POST; either may carry its fields in a JSON body. */
export function searchRoutes(ctx: AppContext): Route[] {
  const input = s.searchInput(ctx.config.search.maxK);
  const relevant = async ({ query: q, req, res }: Input<typeof input, undefined, undefined>) => {
    const k = q.k;
    const filter = filterOf(q.metadata, "metadata");
    // docs/filters.md: ORDERBY sorts what get_content_by_tag returns; a search ranks by relevance, and
    // what the filter asks and cannot be done is refused, never dropped in silence.
    if (filter.orderBy.length > 0) {
      throw new BadRequestError(
        "metadata: ORDERBY is not accepted here: search results are ranked by relevance; ORDERBY sorts the documents of get_content_by_tag",
      );
    }
    const collections = await existing(ctx, principalOf(req), q.collection_names);
    const warnings = (await typos(ctx, filter, collections, "metadata")) ?? [];
    const { vector, warning } = await queryVector(ctx, q.query, req.log);
    if (warning) warnings.push(warning);
    const hits = await ctx.services.index.search({ query: q.query, vector, collections, filter, k });
    const stopwords = hits.length === 0 ? onlyStopwords(q.query) : null;
    if (stopwords) {
      warnings.push(
        `query: every word of the query is a stopword (${stopwords.map((w) => `"${w}"`).join(", ")}), which full-text search leaves out; add a word that says what to find`,
      );
    }
    sendJson(res, {
      warnings: warnings.length > 0 ? warnings : undefined,
      results: hits.map((h) => ({
        doc_id: h.docId,
        collection_name: h.collection,
        chunk_index: h.chunkIndex,
        text: h.text,
        score: h.score,
        metadata: h.metadata,
        start: h.start,
        end: h.end,
        ...citationFields(h.citation),
      })),
    });
  };

  const byTag = async ({ query: q, req, res }: Input<typeof s.tagInput, undefined, undefined>) => {
    const filter = filterOf(q.tag_info, "tag_info");
    const collections = await existing(ctx, principalOf(req), [q.collection_name]);
    const warnings = await typos(ctx, filter, collections, "tag_info");
    const offset = q.cursor === undefined ? 0 : decodeCursor(q.cursor, "number");
    const shown = (d: IndexedDocument) => ({ doc_id: d.docId, collection_name: d.collection, metadata: d.metadata, text: d.text });
    if (q.limit === undefined) {
      // Every match, streamed a batch of texts at a time (after `offset` ones, for a cursor).
      const batches = async function* () {
        let skip = offset;
        for await (const batch of ctx.services.index.scanDocuments({ collections, filter, batch: STREAM_BATCH })) {
          const kept = batch.slice(skip);
          skip = Math.max(0, skip - batch.length);
          yield kept.map(shown);
        }
      };
      await streamList(req, res, { warnings }, "documents", batches(), { next_cursor: null });
      return;
    }
    const docs = await ctx.services.index.findDocuments({ collections, filter, limit: q.limit + 1, offset });
    sendJson(res, {
      warnings,
      documents: docs.slice(0, q.limit).map(shown),
      next_cursor: docs.length > q.limit ? encodeCursor(offset + q.limit) : null,
    });
  };

  const searchDocs = {
    description:
      "One ranked list of chunks across the collections named (all when none is): BM25" +
      (ctx.services.embedder ? " fused with dense vectors" : "") +
      ", the filter applied before ranking. A GET may carry its fields in a JSON body too, read like a POST. " +
      "`warnings` lists what in the filter looks like a typo (a value starting with an operator, a condition joined by `^^` or `&` into a value, a field no document has), and a query of stopwords alone that found nothing; the search runs as written. ORDERBY in the filter is refused (400): results are ranked by relevance." +
      (ctx.services.embedder
        ? " When the embedding service cannot embed the query in time, the search ranks by BM25 alone and `warnings` says so."
        : ""),
    tag: "Search",
    problems: {
      404: "a collection in `collection_names` does not exist",
      ...(ctx.services.embedder ? { 502: "the embedding service refused the query" } : {}),
    } as Record<number, string>,
  };
  const hit = {
    doc_id: "INC001",
    collection_name: "kb",
    chunk_index: 0,
    text: "Database outage in the billing cluster",
    score: 1.9,
    metadata: { sys_id: "INC001", status: "open", priority: 1 },
    start: 0,
    end: 38,
  };
  const tagDocs = {
    description:
      "`ORDERBY` / `ORDERBYDESC` in the filter set the order (then by `doc_id`). Without `limit`, every match comes in one answer, " +
      "streamed a batch at a time; with it, a page, and `next_cursor` continues. `warnings` lists what in the filter looks like a typo. " +
      "A GET may carry `tag_info` in a JSON body too.",
    tag: "Search",
    problems: { 404: "the collection does not exist" },
  };
  const tagResponse = {
    documents: [
      {
        doc_id: "INC001",
        collection_name: "kb",
        metadata: { sys_id: "INC001", status: "open", priority: 1 },
        text: "Database outage in the billing cluster",
      },
    ],
    next_cursor: null,
  };

  return [
    route({
      method: "get",
      path: "/get_relevant_documents",
      summary: "Search chunks by text and metadata filter across collections",
      ...searchDocs,
      scope: "read",
      query: input,
      queryInBody: [],
      response: s.searchResponse,
      example: {
        query: { query: "database outage", k: 5, collection_names: "kb", metadata: "status=open^ORstatus=pending" },
        response: { results: [hit] },
      },
      handle: relevant,
    }),
    route({
      method: "post",
      path: "/get_relevant_documents",
      summary: "Search (filter and collections in the JSON body)",
      ...searchDocs,
      scope: "read",
      query: input,
      queryInBody: ["collection_names", "metadata"],
      response: s.searchResponse,
      example: {
        query: { query: "database outage", k: 5 },
        body: { collection_names: ["kb"], metadata: "status=open^priority<=2" },
        response: { results: [hit] },
      },
      handle: relevant,
    }),
    route({
      method: "get",
      path: "/get_content_by_tag",
      summary: "Documents whose metadata match a filter: all of them, streamed, or a page with limit and cursor",
      ...tagDocs,
      scope: "read",
      query: s.tagInput,
      queryInBody: [],
      response: s.contentResponse,
      example: { query: { collection_name: "kb", tag_info: "status=open^ORDERBYDESCpriority", limit: 50 }, response: tagResponse },
      handle: byTag,
    }),
    route({
      method: "post",
      path: "/get_content_by_tag",
      summary: "Documents whose metadata match a filter (filter in the JSON body)",
      ...tagDocs,
      scope: "read",
      query: s.tagInput,
      queryInBody: ["tag_info"],
      response: s.contentResponse,
      example: {
        query: { collection_name: "kb", limit: 50 },
        body: { tag_info: "status=open^ORDERBYDESCpriority" },
        response: tagResponse,
      },
      handle: byTag,
    }),
  ];
}
