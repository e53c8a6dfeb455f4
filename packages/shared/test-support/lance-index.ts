/**
 * Reads the embedded index's rows straight from its files (DATA_DIR/index), for black-box
 * tests that audit what the service wrote: chunks counted, documents counted (in all and per
 * document), duplicates found.
 */
import path from "node:path";
import { connect } from "@lancedb/lancedb";

export interface IndexRow {
  id: string;
  collection: string;
  docId: string;
  version: number;
  /** -1 for the placeholder row of a document without chunks. */
  chunk: number;
  head: boolean;
  text: string;
  start: number;
  end: number;
  cite: string | null;
}

/** Every row of the chunk table (optionally those a LanceDB `where` selects), as the service left them. */
export async function indexRows(dataDir: string, where?: string): Promise<IndexRow[]> {
  const db = await connect(path.join(dataDir, "index"));
  try {
    const table = await db.openTable("chunks");
    let query = table.query().select(["id", "collection", "doc_id", "version", "chunk", "head", "text", "char_start", "char_end", "cite"]);
    if (where) query = query.where(where);
    const rows = (await query.toArray()) as Record<string, unknown>[];
    table.close();
    return rows.map((r) => ({
      id: String(r.id),
      collection: String(r.collection),
      docId: String(r.doc_id),
      version: Number(r.version),
      chunk: Number(r.chunk),
      head: Boolean(r.head),
      text: String(r.text),
      start: Number(r.char_start),
      end: Number(r.char_end),
      cite: (r.cite as string | null) ?? null,
    }));
  } finally {
    db.close();
  }
}

export interface LanceAudit {
  chunks: number;
  documents: number;
  duplicates: string[];
  /** Chunk rows per `collection/doc_id`. */
  chunksPerDocument: Map<string, number>;
  /** Head rows (one per indexed document version) per `collection/doc_id`. */
  headsPerDocument: Map<string, number>;
}

/** Chunk rows, documents, per-document counts, and (collection, doc, chunk) keys found more than once. */
export async function indexAudit(dataDir: string): Promise<LanceAudit> {
  const rows = await indexRows(dataDir);
  const seen = new Map<string, number>();
  const chunksPerDocument = new Map<string, number>();
  const headsPerDocument = new Map<string, number>();
  const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  for (const r of rows) {
    const doc = `${r.collection}/${r.docId}`;
    if (r.head) bump(headsPerDocument, doc);
    if (r.chunk < 0) continue;
    bump(seen, JSON.stringify([r.collection, r.docId, r.chunk]));
    bump(chunksPerDocument, doc);
  }
  return {
    chunks: rows.filter((r) => r.chunk >= 0).length,
    documents: rows.filter((r) => r.head).length,
    duplicates: [...seen].filter(([, n]) => n > 1).map(([key]) => key),
    chunksPerDocument,
    headsPerDocument,
  };
}

/** The chunk table's rows, and those outside its full-text index (found by a scan of the tail until a maintenance run). */
export async function indexCounts(dataDir: string): Promise<{ rows: number; unindexed: number }> {
  const db = await connect(path.join(dataDir, "index"));
  try {
    const table = await db.openTable("chunks");
    const stats = await table.indexStats("text_idx");
    const rows = await table.countRows();
    table.close();
    return { rows, unindexed: stats?.numUnindexedRows ?? 0 };
  } finally {
    db.close();
  }
}
