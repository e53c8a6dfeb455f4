import { BadRequestError, FilterSyntaxError, NotFoundError, decodeCursor, encodeCursor, parseFilter, type Filter } from "@docstore/shared";
import type { AppContext } from "../context.ts";
import { route, type Input, type Route } from "../route.ts";
import { contentResponse, searchInput, searchResponse, tagInput } from "../schemas.ts";

const DEFAULT_PAGE = 100;

function filterOf(text: string | undefined, field: string): Filter {
  try {
    return parseFilter(text ?? "");
  } catch (err) {
    if (err instanceof FilterSyntaxError) throw new BadRequestError(`${field}: ${err.message}`, { position: err.position });
    throw err;
  }
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
  const input = searchInput(ctx.config.search.maxK);
  const relevant = async ({ query: q, res }: Input<typeof input, undefined, undefined>) => {
    const k = q.k;
    const filter = filterOf(q.metadata, "metadata");
    const collections = await existing(ctx, q.collection_names);
    // With an embedder, the query's vector makes the search hybrid (BM25 and dense, fused).
    const vector = ctx.services.embedder ? (await ctx.services.embedder.embed([q.query]))[0] : undefined;
    const hits = await ctx.services.index.search({ query: q.query, vector, collections, filter, k });
    res.json({
      results: hits.map((h) => ({
        doc_id: h.docId,
        collection_name: h.collection,
        chunk_index: h.chunkIndex,
        text: h.text,
        score: h.score,
        metadata: h.metadata,
        start: h.start,
        end: h.end,
        ...(h.citation?.page !== undefined ? { page: h.citation.page } : {}),
        ...(h.citation?.sheet !== undefined ? { sheet: h.citation.sheet } : {}),
        ...(h.citation?.slide !== undefined ? { slide: h.citation.slide } : {}),
        ...(h.citation?.headingPath ? { heading_path: h.citation.headingPath } : {}),
      })),
    });
  };

  const byTag = async ({ query: q, res }: Input<typeof tagInput, undefined, undefined>) => {
    const filter = filterOf(q.tag_info, "tag_info");
    const collections = await existing(ctx, [q.collection_name]);
    const limit = q.limit ?? DEFAULT_PAGE;
    const offset = q.cursor === undefined ? 0 : decodeCursor(q.cursor, "number");
    const docs = await ctx.services.index.findDocuments({ collections, filter, limit: limit + 1, offset });
    res.json({
      documents: docs.slice(0, limit).map((d) => ({ doc_id: d.docId, collection_name: d.collection, metadata: d.metadata, text: d.text })),
      next_cursor: docs.length > limit ? encodeCursor(offset + limit) : null,
    });
  };

  const searchDocs = {
    description:
      "One ranked list of chunks across the collections named (all when none is): BM25" +
      (ctx.services.embedder ? " fused with dense vectors" : "") +
      ", the filter applied before ranking. A GET may carry its fields in a JSON body too, read like a POST.",
    tag: "Search",
    problems: {
      404: "a collection in `collection_names` does not exist",
      ...(ctx.services.embedder ? { 502: "the embedding service refused the query" } : {}),
    } as Record<number, string>,
  };
  const hit = {
    doc_id: "INC001",
    collection_name: "incidents",
    chunk_index: 0,
    text: "Database outage in the billing cluster",
    score: 1.9,
    metadata: { sys_id: "INC001", status: "open", priority: 1 },
    start: 0,
    end: 38,
  };
  const tagDocs = {
    description: "`ORDERBY` / `ORDERBYDESC` in the filter set the order (then by `doc_id`). A GET may carry `tag_info` in a JSON body too.",
    tag: "Search",
    problems: { 404: "the collection does not exist" },
  };
  const tagResponse = {
    documents: [{ doc_id: "INC001", collection_name: "incidents", metadata: { sys_id: "INC001", status: "open", priority: 1 }, text: "Database outage in the billing cluster" }],
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
      response: searchResponse,
      example: {
        query: { query: "database outage", k: 5, collection_names: "incidents,kb", metadata: "status=open^ORstatus=pending" },
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
      response: searchResponse,
      example: {
        query: { query: "database outage", k: 5 },
        body: { collection_names: ["incidents", "kb"], metadata: "status=open^priority<=2" },
        response: { results: [hit] },
      },
      handle: relevant,
    }),
    route({
      method: "get",
      path: "/get_content_by_tag",
      summary: "Documents whose metadata match a filter",
      ...tagDocs,
      scope: "read",
      query: tagInput,
      queryInBody: [],
      response: contentResponse,
      example: { query: { collection_name: "incidents", tag_info: "status=open^ORDERBYDESCpriority", limit: 50 }, response: tagResponse },
      handle: byTag,
    }),
    route({
      method: "post",
      path: "/get_content_by_tag",
      summary: "Documents whose metadata match a filter (filter in the JSON body)",
      ...tagDocs,
      scope: "read",
      query: tagInput,
      queryInBody: ["tag_info"],
      response: contentResponse,
      example: { query: { collection_name: "incidents", limit: 50 }, body: { tag_info: "status=open^ORDERBYDESCpriority" }, response: tagResponse },
      handle: byTag,
    }),
  ];
}
