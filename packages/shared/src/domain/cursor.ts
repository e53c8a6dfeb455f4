import { BadRequestError } from "../errors.ts";

/** Cursors are opaque to clients: base64url of a JSON value that only our code reads. */
export function encodeCursor(value: string | number): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

/**
 * The catalog lists a collection's documents in doc_id order, and the cursor after a document is
 * made from its id alone: a caller that stops in the middle of a page resumes after any item.
 */
export const documentCursor = (docId: string): string => encodeCursor(docId);

export function decodeCursor(cursor: string, kind: "string"): string;
export function decodeCursor(cursor: string, kind: "number"): number;
export function decodeCursor(cursor: string, kind: "string" | "number"): string | number {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    value = undefined;
  }
  if (typeof value !== kind || (kind === "number" && !(Number.isSafeInteger(value) && (value as number) >= 0))) {
    const shown = JSON.stringify(cursor.length > 40 ? `${cursor.slice(0, 40)}…` : cursor);
    throw new BadRequestError(
      `cursor: received ${shown}, which is not a cursor this service returned; send the next_cursor of the previous page as it was given`,
    );
  }
  return value as string | number;
}
