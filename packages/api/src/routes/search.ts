import { BadRequestError, FilterSyntaxError, NotFoundError, decodeCursor, encodeCursor, filterTypos, parseFilter, type Filter, type IndexedDocument } from "@docstore/shared";
import { streamList } from "../stream.ts";
import { citationFields } from "../citations.ts";
import type { AppContext } from "../context.ts";
import { route, type Input, type Route } from "../route.ts";
import * as s from "../schemas.ts";

const DEFAULT_K = 4;
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

/** What in the filter looks like a typo; the catalog is asked for fields only when the filter names some. */
export async function typos(ctx: AppContext, filter: Filter, collections: string[], field: string): Promise<string[] | undefined> {
  const names = filter.groups.length > 0 || filter.orderBy.length > 0;
  const fields = names ? await ctx.services.catalog.metadataFields(collections) : null;
  const found = filterTypos(filter, fields).map((w) => `${field}: ${w}`);
  return found.length > 0 ? found : undefined;
}

async function existing(ctx: AppContext, names: string[] | undefined): Promise<string[]> {
  const { catalog } = ctx.services;
  if (names === undefined || names.length === 0) return (await catalog.listCollections()).map((c) => c.name);
  const unique = [...new Set(names)];
  const missing = [];
  for (const name of unique) if (!(await catalog.collectionExists(name))) missing.push(name);
  if (missing.length > 0) throw new NotFoundError(`unknown collection${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`);
  return unique;
}

/** Each search is served as a GET and as a POST; either may carry its fields in a JSON body. */
export function searchRoutes(ctx: AppContext): Route[] {
  const searchInput = s.searchInput(ctx.config.search.maxK);
  const relevant = async ({ query: q, res }: Input<typeof searchInput, undefined, undefined>) => {
    const k = q.k ?? DEFAULT_K;
    const filter = filterOf(q.metadata, "metadata");
    const collections = await existing(ctx, q.collection_names);
    const warnings = await typos(ctx, filter, collections, "metadata");
    // With an embedder, the query's vector makes the search hybrid (BM25 and dense, fused).
    const vector = ctx.services.embedder ? (await ctx.services.embedder.embed([q.query]))[0] : undefined;
    const hits = await ctx.services.index.search({ query: q.query, vector, collections, filter, k });
    res.json({
      warnings,
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
    const collections = await existing(ctx, [q.collection_name]);
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
    res.json({
      warnings,
      documents: docs.slice(0, q.limit).map(shown),
      next_cursor: docs.length > q.limit ? encodeCursor(offset + q.limit) : null,
    });
  };

  return [
    route({
      method: "get",
      path: "/get_relevant_documents",
      summary: "Search chunks by text and metadata filter across collections",
      scope: "read",
      query: searchInput,
      queryInBody: [],
      response: s.searchResponse,
      handle: relevant,
    }),
    route({
      method: "post",
      path: "/get_relevant_documents",
      summary: "Search (filter and collections in the JSON body)",
      scope: "read",
      query: searchInput,
      queryInBody: ["collection_names", "metadata"],
      response: s.searchResponse,
      handle: relevant,
    }),
    route({
      method: "get",
      path: "/get_content_by_tag",
      summary: "Documents whose metadata match a filter: all of them, streamed, or a page with limit and cursor",
      scope: "read",
      query: s.tagInput,
      queryInBody: [],
      response: s.contentResponse,
      handle: byTag,
    }),
    route({
      method: "post",
      path: "/get_content_by_tag",
      summary: "Documents whose metadata match a filter (filter in the JSON body)",
      scope: "read",
      query: s.tagInput,
      queryInBody: ["tag_info"],
      response: s.contentResponse,
      handle: byTag,
    }),
  ];
}
