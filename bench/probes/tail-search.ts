/**
 * `node bench/probes/tail-search.ts [indexed] [tail] [listed]` (default 50,000, 20,000 and
 * 50,250,1000,4000): what a full-text search costs on a LanceDB table whose last rows are outside
 * the full-text index, in three ways: the whole table (every search scans the tail),
 * `fastSearch()` (the indexed rows only), and the whole table restricted by a `where` to some of
 * the tail's documents, as many as each of `listed` says (how a search scans the documents listed
 * as outside the index: lancedb-outside.ts). bench:scale's documents, the service's full-text
 * index settings, the 300 SciFact test queries.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect, Index, MatchQuery, Operator, type Table } from "@lancedb/lancedb";
import { textIndex } from "@docstore/shared/index/lancedb-table";
import { fmt } from "../parts/lib.ts";
import { scaleBatches, type ScaleDoc } from "../parts/scale-corpus.ts";
import { scaleOptions } from "../parts/scale-measure.ts";

const indexed = Number(process.argv[2] ?? 50_000);
const tail = Number(process.argv[3] ?? 20_000);
const listed = (process.argv[4] ?? "50,250,1000,4000").split(",").map(Number);
const { sentences, queries } = scaleOptions(0);
const dir = mkdtempSync(path.join(tmpdir(), "tail-search-"));
const db = await connect(dir);
const batches = scaleBatches(sentences, indexed + tail, 5_000);
/** The next 5,000 documents as rows. */
const rows = () => {
  const next = batches.next();
  return (next.done ? [] : next.value).map((d: ScaleDoc) => ({ doc_id: d.id, text: d.text }));
};
let table: Table | null = null;
for (let added = 0; added < indexed; added += 5_000) {
  const batch = rows();
  if (table) await table.add(batch);
  else table = await db.createTable("chunks", batch);
}
const t = table!;
await t.createIndex("text", { config: textIndex() });
await t.createIndex("doc_id", { config: Index.btree() });
const tailIds: string[] = [];
for (let added = 0; added < tail; added += 5_000) {
  const batch = rows();
  tailIds.push(...batch.map((r) => r.doc_id));
  await t.add(batch);
}
const stats = await t.indexStats("text_idx");
console.log(`${fmt(stats?.numIndexedRows ?? 0)} rows in the full-text index, ${fmt(stats?.numUnindexedRows ?? 0)} outside it`);
const some = (n: number) => tailIds.filter((_, i) => i % Math.ceil(tailIds.length / n) === 0).map((id) => `'${id}'`);

const ways: [string, (q: MatchQuery) => Promise<unknown[]>][] = [
  ["the whole table", (q) => t.query().fullTextSearch(q).select(["doc_id", "_score"]).limit(10).toArray()],
  ["fastSearch()", (q) => t.query().fullTextSearch(q).fastSearch().select(["doc_id", "_score"]).limit(10).toArray()],
  ...(process.env.PROBE_PARTS
    ? listed.flatMap((n): [string, (q: MatchQuery) => Promise<unknown[]>][] => {
        const ids = some(n);
        const where = `doc_id IN (${ids.join(", ")})`;
        return [
          [
            `fastSearch() where (${ids.length})`,
            (q) => t.query().fullTextSearch(q).fastSearch().where(where).select(["doc_id", "_score"]).limit(10).toArray(),
          ],
          [`no search, where (${ids.length})`, () => t.query().where(where).select(["doc_id"]).limit(10).toArray()],
        ];
      })
    : []),
  ...listed.map((n): [string, (q: MatchQuery) => Promise<unknown[]>] => {
    const ids = some(n);
    return [
      `where doc_id IN (${ids.length} of the tail's)`,
      (q) =>
        t
          .query()
          .fullTextSearch(q)
          .where(`doc_id IN (${ids.join(", ")})`)
          .select(["doc_id", "_score"])
          .limit(10)
          .toArray(),
    ];
  }),
];
for (const [name, search] of ways) {
  const match = (i: number) => new MatchQuery(queries[i % queries.length]!, "text", { operator: Operator.Or });
  for (let i = 0; i < 3; i++) await search(match(i));
  const rounds = 20;
  const started = performance.now();
  for (let i = 0; i < rounds; i++) await search(match(i));
  console.log(`${name}: ${fmt((performance.now() - started) / rounds, 1)} ms a search (one at a time)`);
}
t.close();
db.close();
rmSync(dir, { recursive: true, force: true });
