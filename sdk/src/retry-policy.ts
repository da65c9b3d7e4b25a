/**
 * Which failed attempts are sent again, and after how long.
 *
 * Retried: network errors, 429 and 503 (and a POST's 409 `idempotency_key_in_use`, whose first
 * attempt is still running), for requests that cannot take effect twice:
 * - GET and HEAD change nothing;
 * - POST always carries an `Idempotency-Key`, the same on every attempt, so the service runs it once
 *   and answers a repeat with the stored answer (`X-Idempotent-Replay: true`).
 * PATCH and DELETE carry no key: after a network error or a 503 the change may have been made, and
 * sending it again could undo someone else's change in between (PATCH) or turn a success into a 404
 * (DELETE). They are retried only after a 429, which the service answers before doing anything.
 */
export interface RetryOptions {
  /** Attempts in all, the first included (default 4; 1 turns retries off). */
  maxAttempts?: number;
  /** Wait before the first retry, doubled for each further one, ±50% jitter (default 250 ms). */
  baseDelayMs?: number;
  /** Longest wait between two attempts (default 30 s). A longer `Retry-After` is not waited for: the answer is returned as it is. */
  maxDelayMs?: number;
}

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export function retryPolicy(options: RetryOptions = {}): RetryPolicy {
  return { maxAttempts: options.maxAttempts ?? 4, baseDelayMs: options.baseDelayMs ?? 250, maxDelayMs: options.maxDelayMs ?? 30_000 };
}

/** Whether a failed attempt (an answer's status, or undefined for a network error) may be sent again. */
export function isRetryable(method: string, status: number | undefined, problemCode?: string): boolean {
  if (status === 429) return true;
  const noDoubleEffect = method === 'GET' || method === 'HEAD' || method === 'POST';
  if (!noDoubleEffect) return false;
  if (status === undefined || status === 503) return true;
  return method === 'POST' && status === 409 && problemCode === 'idempotency_key_in_use';
}

/** Milliseconds to wait before attempt `attempt + 1`: the exponential backoff with jitter, or `Retry-After` when longer. */
export function retryDelay(policy: RetryPolicy, attempt: number, retryAfter: string | null, now = Date.now()): number {
  const backoff = policy.baseDelayMs * 2 ** (attempt - 1);
  const jittered = backoff * (0.5 + Math.random());
  return Math.max(jittered, retryAfterMs(retryAfter, now) ?? 0);
}

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date (RFC 9110, section 10.2.3). */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
