import { retryDelayMs, type AttemptOutcome, type RetrySchedule } from './retry-policy.js';

/** The retry settings a delivery's next state depends on. */
export interface DeliveryRetrySettings extends RetrySchedule {
  maxAttempts: number;
}

export type NextDeliveryState =
  /** The receiver accepted it. */
  | { status: 'succeeded' }
  /** Sent again at `nextAttemptAt`. */
  | { status: 'pending'; nextAttemptAt: Date }
  /** Given up: trying again cannot help, or the last attempt was made. */
  | { status: 'failed' };

/**
 * Where a delivery goes after attempt number `attempt` (1-based; when nothing was sent, the count of
 * attempts so far) ended with `outcome`: delivered, retried after the backoff (or the receiver's
 * Retry-After, if later), or failed for good.
 */
export function nextDeliveryState(
  attempt: number,
  outcome: AttemptOutcome,
  settings: DeliveryRetrySettings,
  now: Date,
  random: () => number = Math.random,
): NextDeliveryState {
  if (outcome.kind === 'success') return { status: 'succeeded' };
  if (outcome.kind === 'retryable' && attempt < settings.maxAttempts) {
    const delay = retryDelayMs(attempt, settings, outcome.retryAfterMs, random);
    return { status: 'pending', nextAttemptAt: new Date(now.getTime() + delay) };
  }
  return { status: 'failed' };
}
