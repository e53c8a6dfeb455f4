/**
 * Writes src/openapi-types.ts from a service's /openapi.json: `node scripts/generate.ts [url]`.
 * Without a URL it starts the embedded service from this checkout on a free port and a
 * throwaway DATA_DIR, reads the document and stops it.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { removeDir, startService } from "../../../test/harness.ts";
import { generateTypes } from "./openapi-types.ts";

const OUT = path.resolve(import.meta.dirname, "../src/openapi-types.ts");

async function fetchDocument(url: string): Promise<Record<string, unknown>> {
  const res = await fetch(new URL("/openapi.json", url));
  if (!res.ok) throw new Error(`${url}/openapi.json: HTTP ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

const given = process.argv[2];
let document: Record<string, unknown>;
if (given) document = await fetchDocument(given);
else {
  const svc = await startService();
  try {
    document = await fetchDocument(svc.url);
  } finally {
    await svc.stop();
    removeDir(svc.dataDir);
  }
}
writeFileSync(OUT, await generateTypes(document));
console.log(`wrote ${path.relative(process.cwd(), OUT)}`);
