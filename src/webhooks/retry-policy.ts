/**
 * When a delivery attempt failed, whether and when to try again.
 *
 *   attempt n fails → wait base × 2^(n-1) ± 20 % (never less than Retry-After, capped at 1 h)
 *   4 attempts in all, then the delivery is `failed`.
 */

export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;
export const JITTER = 0.2;

export type AttemptOutcome =
  /** 2xx: done. */
  | { kind: 'success' }
  /** Network error, time-out, 429, 5xx or 3xx: worth trying again. */
  | { kind: 'retryable'; retryAfterMs?: number }
  /** Any other 4xx, or a destination the URL guard refuses: trying again cannot help. */
  | { kind: 'permanent' };

export function classifyStatus(statusCode: number, retryAfterHeader?: string | string[], now: Date = new Date()): AttemptOutcome {
  if (statusCode >= 200 && statusCode < 300) return { kind: 'success' };
  if (statusCode === 429 || statusCode >= 500 || (statusCode >= 300 && statusCode < 400)) {
    const retryAfterMs = parseRetryAfter(retryAfterHeader, now);
    return retryAfterMs === undefined ? { kind: 'retryable' } : { kind: 'retryable', retryAfterMs };
  }
  return { kind: 'permanent' };
}

/** Retry-After as delay-seconds or an HTTP-date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(header: string | string[] | undefined, now: Date = new Date()): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - now.getTime()), MAX_RETRY_AFTER_MS);
}

/** The nominal wait after failed attempt `attempt` (1-based), before jitter. */
export function backoffMs(attempt: number, baseMs: number): number {
  return baseMs * 2 ** (attempt - 1);
}

/**
 * The wait before the next attempt: exponential backoff with ±20 % jitter (so receivers that
 * failed together are not hit together again), and never sooner than the receiver's Retry-After.
 */
export function retryDelayMs(attempt: number, baseMs: number, retryAfterMs: number | undefined, random: () => number = Math.random): number {
  const jittered = backoffMs(attempt, baseMs) * (1 - JITTER + 2 * JITTER * random());
  return Math.round(Math.max(jittered, retryAfterMs ?? 0));
}
