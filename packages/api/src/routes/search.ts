import { Router, type Request, type Response } from "express";
import { BadRequestError, FilterSyntaxError, NotFoundError, decodeCursor, encodeCursor, parseFilter, type Filter } from "@docstore/shared";
import type { AppContext } from "../context.ts";
import { requireScope } from "../auth.ts";
import { parse, searchInput, tagInput } from "../schemas.ts";

const DEFAULT_K = 4;
const DEFAULT_PAGE = 100;

/** A GET may carry a JSON body (Python's requests does); body fields win over the query string. */
function input(req: Request): Record<string, unknown> {
  const body = req.body !== null && typeof req.body === "object" && !Array.isArray(req.body) ? req.body : {};
  return { ...req.query, ...body };
}

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

export function searchRoutes(ctx: AppContext): Router {
  const router = Router();
  const read = requireScope(ctx.authenticate, "read");

  const relevant = async (req: Request, res: Response) => {
    const q = parse(searchInput, input(req), "request");
    const k = q.k ?? DEFAULT_K;
    if (k > ctx.config.search.maxK) throw new BadRequestError(`k: must be at most ${ctx.config.search.maxK}`);
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

  const byTag = async (req: Request, res: Response) => {
    const q = parse(tagInput, input(req), "request");
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

  router.get("/get_relevant_documents", read, relevant);
  router.post("/get_relevant_documents", read, relevant);
  router.get("/get_content_by_tag", read, byTag);
  router.post("/get_content_by_tag", read, byTag);
  return router;
}
