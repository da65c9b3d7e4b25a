/**
 * When a delivery attempt failed, whether and when to try again.
 *
 *   attempt n fails → wait base × factor^(n-1) ± 20 % (never less than Retry-After, capped at 1 h)
 *   4 attempts in all, then the delivery is `failed`.
 *
 * With the defaults (base 5 min, factor 4) the waits are 5, 20 and 80 min: the last attempt comes
 * 105 min after the first (84 min at the least, with jitter), so a receiver may be down for over an hour.
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

/** The exponential backoff: the first retry waits about `retryBaseMs`, each later one `retryFactor` times longer. */
export interface RetrySchedule {
  retryBaseMs: number;
  retryFactor: number;
}

/** The nominal wait after failed attempt `attempt` (1-based), before jitter. */
export function backoffMs(attempt: number, schedule: RetrySchedule): number {
  return schedule.retryBaseMs * schedule.retryFactor ** (attempt - 1);
}

/**
 * The wait before the next attempt: exponential backoff with ±20 % jitter (so receivers that
 * failed together are not hit together again), and never sooner than the receiver's Retry-After.
 */
export function retryDelayMs(attempt: number, schedule: RetrySchedule, retryAfterMs: number | undefined, random: () => number = Math.random): number {
  const jittered = backoffMs(attempt, schedule) * (1 - JITTER + 2 * JITTER * random());
  return Math.round(Math.max(jittered, retryAfterMs ?? 0));
}

/**
 * How long after the first attempt the last one comes at the soonest (every wait jittered down):
 * the receiver downtime that `maxAttempts` attempts are sure to outlast.
 */
export function shortestRetryWindowMs(schedule: RetrySchedule, maxAttempts: number): number {
  let total = 0;
  for (let attempt = 1; attempt < maxAttempts; attempt++) total += backoffMs(attempt, schedule) * (1 - JITTER);
  return Math.round(total);
}

/**
 * How long after the first attempt the last one comes at the latest, workers keeping up: every wait
 * jittered up, or held back by a receiver's Retry-After at its cap.
 */
export function longestRetryWindowMs(schedule: RetrySchedule, maxAttempts: number): number {
  let total = 0;
  for (let attempt = 1; attempt < maxAttempts; attempt++) total += Math.max(backoffMs(attempt, schedule) * (1 + JITTER), MAX_RETRY_AFTER_MS);
  return Math.round(total);
}
