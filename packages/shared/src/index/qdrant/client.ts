/**
 * The part of @qdrant/js-client-rest the index uses, and how its failures become ours.
 */
import { QdrantClient } from "@qdrant/js-client-rest";
import { UnavailableError } from "../../errors.ts";
import { httpTransport, type Transport } from "./transport.ts";

/** The client's methods the adapter calls; tests can hand in anything with these. */
export type QdrantApi = Pick<
  QdrantClient,
  | "getCollection"
  | "createCollection"
  | "updateCollection"
  | "createPayloadIndex"
  | "upsert"
  | "batchUpdate"
  | "delete"
  | "query"
  | "queryBatch"
  | "scroll"
  | "retrieve"
  | "versionInfo"
>;

export interface QdrantConnection {
  url: string;
  apiKey?: string | undefined;
  /** Per request, in milliseconds. */
  timeoutMs?: number;
}

/** One transport for every client of the process: its kept-alive connections are shared. */
let shared: Transport | undefined;

export function createQdrantClient({ url, apiKey, timeoutMs = 30_000 }: QdrantConnection): QdrantClient {
  shared ??= httpTransport();
  // No compatibility check: it is a request at construction whose failure is only logged.
  // Answers uncompressed: Qdrant then compresses none (it did for fetch, which asks for gzip by
  // default, at more CPU than the search itself: docs/benchmarks.md).
  return new QdrantClient({
    url,
    apiKey,
    timeout: timeoutMs,
    checkCompatibility: false,
    headers: { "accept-encoding": "identity" },
    transport: shared,
  });
}

/** HTTP status of an error the client raised for a response, if it is one. */
export function statusOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const status = (err as { status?: unknown }).status;
  if (typeof status === "number") return status;
  // QdrantClientUnexpectedResponseError carries the status only in its message.
  const m = err instanceof Error ? /^Unexpected Response: (\d{3})/.exec(err.message) : null;
  return m ? Number(m[1]) : undefined;
}

/**
 * Qdrant out of reach (connection refused, timeout, 5xx, 429) is a 503 for our callers; any
 * other rejection is a request we built wrong, so it stays an error (a 500) with Qdrant's
 * reason in the message.
 */
export function qdrantError(action: string, err: unknown): Error {
  const status = statusOf(err);
  // No status: the request got no answer (connection refused or reset, DNS, timeout).
  if (status === undefined || status >= 500 || status === 429) {
    return new UnavailableError(`Qdrant is unavailable (${action}): ${describe(err)}`, err);
  }
  return new Error(`Qdrant rejected a request (${action}): ${status} ${describe(err)}`, { cause: err });
}

function describe(err: unknown): string {
  const data = (err as { data?: unknown } | null)?.data;
  const reason = (data as { status?: { error?: unknown } } | undefined)?.status?.error;
  if (typeof reason === "string") return reason;
  return err instanceof Error ? err.message.split("\n")[0]! : String(err);
}
