/**
 * `node bench/probes/json-answer.ts`: the API's cost of writing a tag lookup's answer (100
 * documents of about 1 KB of SciFact text, bench:scale's documents) as res.json writes it
 * (JSON.stringify, then the string encoded into bytes) and as `jsonBytes` does (each document
 * serialized and encoded alone), with the page faults each answer costs. Several answers of
 * different documents, since a character past U+00FF in one text changes the whole string.
 */
import { jsonBytes } from "@docstore/shared/json-bytes";
import { fmt } from "../parts/lib.ts";
import { metadataJson, scaleBatches } from "../parts/scale-corpus.ts";
import { scaleOptions } from "../parts/scale-measure.ts";

const ROUNDS = 3_000;
const { sentences } = scaleOptions(0);
const batches = scaleBatches(sentences, 400, 100);

for (const batch of batches) {
  const documents = batch.map((d) => ({ doc_id: d.id, collection_name: "bench", metadata: metadataJson(d), text: d.text }));
  const body = { warnings: [], documents, next_cursor: null };
  const wide = documents.filter((d) => [...d.text].some((c) => c.charCodeAt(0) > 0xff)).length;
  const ways = { "JSON.stringify, then bytes": () => Buffer.from(JSON.stringify(body)), jsonBytes: () => jsonBytes(body) };
  const figures = Object.entries(ways).map(([name, write]) => {
    for (let i = 0; i < 300; i++) write();
    const before = process.resourceUsage();
    for (let i = 0; i < ROUNDS; i++) write();
    const after = process.resourceUsage();
    const cpu = (after.userCPUTime - before.userCPUTime + after.systemCPUTime - before.systemCPUTime) / 1000 / ROUNDS;
    return `${name} ${fmt(cpu, 3)} ms (${fmt((after.minorPageFault - before.minorPageFault) / ROUNDS)} page faults)`;
  });
  console.log(`${fmt(jsonBytes(body).length / 1024)} KB, ${wide} of 100 texts with a character past U+00FF: ${figures.join("; ")}`);
}
