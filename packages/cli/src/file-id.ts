import { createHash } from "node:crypto";

/**
 * The doc_id `load` gives a file with no id of its own: `file-` and 32 hex digits of the sha256
 * of its absolute path, so that the same file loaded by any command replaces its document.
 */
export const fileDocId = (absolutePath: string) => `file-${createHash("sha256").update(absolutePath).digest("hex").slice(0, 32)}`;
