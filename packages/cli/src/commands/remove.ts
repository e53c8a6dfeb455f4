/** `rm` and `rm-collection`. */
import { createInterface } from "node:readline/promises";
import { ProblemError } from "@docstore/client";
import { clientOf, print, printJson, type Context } from "../context.ts";
import { findDocId } from "./find.ts";

export async function rm(ctx: Context, docIds: string[], flags: { collection: string }): Promise<number> {
  const client = clientOf(ctx);
  let failed = 0;
  for (const given of docIds) {
    const id = await findDocId(client, flags.collection, given);
    try {
      const r = await client.deleteDocument(flags.collection, id);
      if (ctx.json) printJson(ctx, r);
      else print(ctx, `deleted ${flags.collection}/${id}${id === given ? "" : ` (${given})`}`);
    } catch (err) {
      if (!(err instanceof ProblemError) || err.status !== 404) throw err;
      failed++;
      if (ctx.json) printJson(ctx, { deleted: false, collection_name: flags.collection, doc_id: id, error: err.detail });
      else ctx.stderr.write(`not deleted: ${err.detail}\n`);
    }
  }
  return failed > 0 ? 1 : 0;
}

/** Reads one answer from stdin, a terminal or not (`echo y | docstore rm-collection kb`); no answer is no. */
async function confirm(ctx: Context, question: string): Promise<boolean> {
  const rl = createInterface({ input: ctx.stdin, output: ctx.stderr, terminal: ctx.stdin.isTTY === true });
  try {
    const answer = await Promise.race([rl.question(question), new Promise<string>((resolve) => rl.once("close", () => resolve("")))]);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

export async function rmCollection(ctx: Context, name: string, flags: { yes: boolean }): Promise<number> {
  const client = clientOf(ctx);
  if (!flags.yes) {
    const found = (await client.listCollections()).find((c) => c.name === name);
    if (!found) throw new ProblemError({ type: "about:blank", title: "Not Found", status: 404, detail: `unknown collection: ${name}` });
    if (!(await confirm(ctx, `delete collection ${name} and its ${found.documents} documents? [y/N] `))) {
      ctx.stderr.write(`not deleted (pass --yes to delete without asking)\n`);
      return 1;
    }
  }
  const r = await client.deleteCollection(name);
  if (ctx.json) printJson(ctx, r);
  else print(ctx, `deleted collection ${name} (${r.documents} documents)`);
  return 0;
}
