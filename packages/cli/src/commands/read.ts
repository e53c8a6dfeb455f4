/** `search`, `ls`, `status` and `export`: what is in the service, for people and for scripts. */
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import type { DocumentState } from "@docstore/client";
import { clientOf, columns, print, printJson, table, type Context } from "../context.ts";
import { formatBytes } from "../format.ts";
import { findDocId } from "./find.ts";

const oneLine = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export async function search(ctx: Context, words: string[], flags: { collection: string[]; k?: number; filter?: string }): Promise<number> {
  const r = await clientOf(ctx).search(words.join(" "), {
    k: flags.k,
    collections: flags.collection.length > 0 ? flags.collection : undefined,
    filter: flags.filter,
  });
  if (ctx.json) {
    printJson(ctx, r);
    return 0;
  }
  for (const w of r.warnings ?? []) ctx.stderr.write(`warning: ${w}\n`);
  if (r.results.length === 0) print(ctx, "no results");
  r.results.forEach((hit, i) => {
    const where = [hit.page !== undefined ? `page ${hit.page}` : "", hit.heading_path?.join(" > ") ?? ""].filter(Boolean).join(", ");
    print(ctx, `${i + 1}. ${hit.score.toFixed(3)}  ${hit.collection_name}/${hit.doc_id} #${hit.chunk_index}${where ? ` (${where})` : ""}`);
    print(ctx, `   ${oneLine(hit.text, 200)}`);
    if (Object.keys(hit.metadata).length > 0) print(ctx, `   ${oneLine(JSON.stringify(hit.metadata), 200)}`);
  });
  return 0;
}

export async function ls(ctx: Context, collection: string | undefined, flags: { status?: string; filter?: string }): Promise<number> {
  const client = clientOf(ctx);
  if (collection === undefined) {
    const collections = await client.listCollections();
    if (ctx.json) for (const c of collections) printJson(ctx, c);
    else
      print(
        ctx,
        table(
          ["COLLECTION", "DOCUMENTS", "READY", "PENDING", "FAILED"],
          collections.map((c) => [c.name, c.documents, c.ready, c.pending, c.failed]),
        ),
      );
    return 0;
  }
  // A page at a time, printed as it comes: a collection can be large.
  // Made to fit the terminal (100 columns when not on one): names and errors are cut to fit,
  // and the content type and chunk count are left to `status` and `--json`.
  const header = ["DOC_ID", "STATUS", "VER", "SIZE", "UPDATED", "NAME", "ERROR"];
  const fit = { width: columns(ctx), shrink: [5, 6] };
  let page: (string | number)[][] = [];
  let first = true;
  const flush = () => {
    if (page.length === 0 && !first) return;
    const text = table(header, page, fit);
    print(ctx, first ? text : text.slice(text.indexOf("\n") + 1));
    first = false;
    page = [];
  };
  for await (const d of client.documents(collection, { status: flags.status as DocumentState | undefined, filter: flags.filter })) {
    if (ctx.json) printJson(ctx, d);
    else {
      page.push([
        d.doc_id,
        d.status,
        d.version,
        formatBytes(d.size),
        d.updated_at.slice(0, 16).replace("T", " "),
        d.name,
        oneLine(d.error ?? "", 1000),
      ]);
      if (page.length === 1000) flush();
    }
  }
  if (!ctx.json) flush();
  return 0;
}

export async function status(ctx: Context, given: string, flags: { collection: string }): Promise<number> {
  const client = clientOf(ctx);
  const s = await client.documentStatus(flags.collection, await findDocId(client, flags.collection, given));
  if (ctx.json) printJson(ctx, s);
  else {
    const rows: [string, unknown][] = [
      ["doc_id", s.doc_id],
      ["collection", s.collection_name],
      ["status", s.status],
      ["version", s.version],
      ["chunks", s.chunks],
      ["name", s.filename ?? ""],
      ["type", s.content_type],
      ["size", s.size],
      ["sha256", s.sha256],
      ["created", s.created_at],
      ["updated", s.updated_at],
      ["metadata", JSON.stringify(s.metadata)],
    ];
    if (s.error) rows.push(["error", s.error]);
    for (const [k, v] of rows) print(ctx, `${k.padEnd(10)} ${String(v)}`);
  }
  return s.status === "failed" ? 1 : 0;
}

/** Every document of a collection (or those matching a filter) as JSON lines that `load --jsonl` reads back. */
export async function exportCollection(ctx: Context, flags: { collection: string; filter?: string; output?: string }): Promise<number> {
  const out = flags.output ? createWriteStream(flags.output) : ctx.stdout;
  let n = 0;
  for await (const d of clientOf(ctx).contents(flags.collection, { filter: flags.filter })) {
    if (!out.write(`${JSON.stringify({ doc_id: d.doc_id, text: d.text, metadata: d.metadata })}\n`)) await once(out, "drain");
    n++;
  }
  if (flags.output) {
    out.end();
    await once(out, "finish");
    ctx.stderr.write(`exported ${n} documents to ${flags.output}\n`);
  }
  return 0;
}
