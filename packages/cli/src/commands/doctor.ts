/** `doctor`: the service's consistency check of catalog, raw copies and index, and its repair. */
import type { DoctorReport } from "@docstore/client";
import { clientOf, print, printJson, table, type Context } from "../context.ts";
import { EXIT } from "../program.ts";

/** Exit code 1 while disagreements remain unrepaired (found by a report-only run, or a repair that did not go through). */
export async function doctor(ctx: Context, flags: { repair: boolean; collection?: string }): Promise<number> {
  const report = await clientOf(ctx).doctor({ repair: flags.repair, collection: flags.collection });
  if (ctx.json) printJson(ctx, report);
  else print(ctx, describe(report));
  return report.unrepaired > 0 ? EXIT.failed : EXIT.ok;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

export function describe(r: DoctorReport): string {
  const c = r.checked;
  const lines = [
    `checked ${plural(c.collections, "collection")}: ${plural(c.documents, "document")} in the catalog, ${c.index_documents.toLocaleString("en-US")} in the index, ${plural(c.blobs, "raw copy", "raw copies")} (${r.seconds} s)`,
  ];
  const kinds = Object.entries(r.found).filter(([, n]) => n > 0);
  const found = kinds.reduce((n, [, k]) => n + k, 0);
  const unrepairable = Object.entries(r.unrepairable).filter(([, n]) => n > 0);
  if (found === 0 && unrepairable.length === 0) lines.push("catalog, raw copies and index agree");
  if (found > 0) {
    const repaired = Object.values(r.repaired).reduce((n, k) => n + k, 0);
    lines.push(
      "",
      table(
        ["DISAGREEMENT", "FOUND", "REPAIRED"],
        kinds.map(([kind, n]) => [kind, n, r.repaired[kind as keyof typeof r.repaired]]),
      ),
    );
    lines.push(
      "",
      r.repair
        ? `${plural(found, "disagreement")} found, ${repaired.toLocaleString("en-US")} repaired${r.unrepaired > 0 ? `, ${r.unrepaired.toLocaleString("en-US")} not (see below)` : ""}`
        : `${plural(found, "disagreement")} found; run again with --repair to repair them`,
    );
  }
  if (unrepairable.length > 0) {
    lines.push(
      "",
      `cannot be repaired (a new load of the document restores it): ${unrepairable.map(([kind, n]) => `${kind} ${n}`).join(", ")}`,
    );
  }
  if (r.examples.length > 0) {
    lines.push("", "examples:");
    for (const e of r.examples)
      lines.push(`  ${e.kind}  ${e.collection_name}${e.doc_id === null ? "" : `/${e.doc_id}`}: ${e.detail}`, `    -> ${e.action}`);
    if (r.examples_omitted > 0) lines.push(`  … and ${plural(r.examples_omitted, "more finding")}`);
  }
  return lines.join("\n");
}
