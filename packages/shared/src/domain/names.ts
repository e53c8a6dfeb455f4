/** Collection names double as blob-key segments and tenant keys: keep them plain. */
export const COLLECTION_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const COLLECTION_NAME_RULE = "1 to 64 letters, digits, '_' or '-', starting with a letter or digit";

/** Document ids: ServiceNow sys_ids, UUIDs, file names with dots, URN-like ids. */
export const DOC_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$/;
export const DOC_ID_RULE = "1 to 200 characters of letters, digits and . _ : @ -, starting with a letter or digit";

/**
 * Where a document version's raw bytes live: named by the version's job id (a version 7 UUID
 * we make), so no client text reaches a path. Its first 8 hex digits change every 65 seconds,
 * so keys grow with time (cheap to index) and files spread over folders.
 */
export function blobKeyFor(collection: string, jobId: string): string {
  return `${collection}/${jobId.slice(0, 8)}/${jobId}`;
}
