import { randomFillSync } from "node:crypto";

const pool = Buffer.alloc(16 * 256);
let offset = pool.length;

/**
 * A version 7 UUID (RFC 9562): 48 bits of Unix milliseconds, then random bits. Ids that grow
 * with time land at the end of SQLite's B-tree indexes instead of at random pages, so a
 * commit of many new documents writes a few pages, not one per document.
 */
export function uuidv7(now = Date.now()): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const b = pool.subarray(offset, offset + 16);
  offset += 16;
  b.writeUIntBE(now, 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
