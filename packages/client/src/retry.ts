/** When to try a request again: bounded attempts, backoff, and the service's own Retry-After. */
export interface RetryPolicy {
  /** Tries in all, the first included; 1 turns retrying off. */
  attempts: number;
  /** First backoff when the answer says nothing of when to come back; doubled each try. */
  baseDelayMs: number;
  /** The longest wait between tries. A Retry-After longer than this is not waited for: the error is raised. */
  maxDelayMs: number;
}

/** The longest wait covers a rate limit's window of a minute (RATE_LIMIT_PER_MIN). */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 500, maxDelayMs: 60_000 };

/** Statuses that mean "not now" rather than "no": nothing was done, the same request may succeed later. */
export const RETRYABLE = new Set([429, 503]);

/** Retry-After in seconds: either delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  // An HTTP date names its day and month ("Wed, 21 Oct 2015 07:28:00 GMT").
  const date = /[a-z]/i.test(trimmed) ? Date.parse(trimmed) : NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * How long to wait before try `attempt + 1` (attempt counts from 1), or null to give up: past
 * the attempts, or when the service asks for longer than `maxDelayMs`. With Retry-After the
 * wait is exactly what it asks; without, exponential backoff with jitter.
 */
export function retryDelay(
  policy: RetryPolicy,
  attempt: number,
  retryAfterSeconds: number | undefined,
  random = Math.random,
): number | null {
  if (attempt >= policy.attempts) return null;
  if (retryAfterSeconds !== undefined) {
    const ms = retryAfterSeconds * 1000;
    return ms > policy.maxDelayMs ? null : ms;
  }
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(backoff * (0.5 + random() / 2));
}
