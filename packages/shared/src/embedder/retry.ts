/**
 * When to retry an embeddings request, and how long to wait: 408, 429, 5xx and network errors
 * (the SDK's APIConnectionError, timeouts included) are worth another attempt; other 4xx never.
 */
import { APIConnectionError, APIError } from "openai";

/** Capped exponential backoff with jitter (75-100% of the step), for attempt 1, 2, ... */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.25);
}

export const retryable = (err: unknown) =>
  err instanceof APIConnectionError || (err instanceof APIError && (err.status === 408 || err.status === 429 || (err.status ?? 0) >= 500));

/** The wait the server asked for, in ms, if any. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number.parseFloat(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function describeFailure(err: unknown): string {
  if (err instanceof APIConnectionError) {
    const cause = (err.cause as { cause?: { code?: string; message?: string } } | undefined)?.cause;
    return cause?.code ?? cause?.message ?? err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
