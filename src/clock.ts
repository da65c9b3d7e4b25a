/** The source of "now". Injected so tests can move time (idempotency windows, key expiry). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** ISO 8601 UTC with milliseconds, the only timestamp format we store and answer with. */
export function isoNow(clock: Clock): string {
  return clock.now().toISOString();
}
