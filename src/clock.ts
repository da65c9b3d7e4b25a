import { errors } from './errors.js';

/** The source of "now". Injected so tests can move time (idempotency windows, key expiry). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** ISO 8601 UTC with milliseconds, the only timestamp format we store and answer with. */
export function isoNow(clock: Clock): string {
  return clock.now().toISOString();
}

/**
 * A client's RFC 3339 instant in our stored form (`YYYY-MM-DDTHH:MM:SS.sssZ`), or a 400 naming the
 * field. Leap seconds (`:60`) and instants outside years 0000–9999 pass the schema's date-time
 * format but cannot be stored in a form that sorts as text, so they are refused here.
 */
export function canonicalInstant(value: string, field: string): string {
  // Already canonical (what our own answers and most clients send): one parse to check it is a real
  // instant, no second string. A reading batch runs this 1,000 times.
  if (CANONICAL_INSTANT.test(value) && !Number.isNaN(Date.parse(value)) && sameDayOfMonth(value)) return value;
  const parsed = new Date(value);
  const iso = Number.isNaN(parsed.getTime()) ? '' : parsed.toISOString();
  if (!/^\d{4}-/.test(iso)) {
    throw errors.validation([{ field, message: 'must be a date-time between 0000-01-01 and 9999-12-31 (UTC), without leap seconds' }]);
  }
  return iso;
}

const CANONICAL_INSTANT = /^\d{4}-[01]\d-[0-3]\dT(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/** Date.parse reads 2027-02-30 as March 2: such a day takes the general path, which answers what it always did. */
function sameDayOfMonth(value: string): boolean {
  const day = Number(value.slice(8, 10));
  if (day <= 28) return day >= 1;
  const year = Number(value.slice(0, 4));
  const month = Number(value.slice(5, 7));
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * A filter's bound in stored form (canonicalInstant), rounded up to the next millisecond when it is
 * finer than one: stored instants have milliseconds, so "at or after 27.0421" must not take 27.042,
 * which is before it, and "before 27.0421" must take it (both are then the bound 27.043).
 */
export function canonicalBound(value: string, field: string): string {
  const iso = canonicalInstant(value, field);
  const fraction = /\.(\d+)/.exec(value)?.[1] ?? '';
  if (!/[1-9]/.test(fraction.slice(3))) return iso;
  const next = new Date(Date.parse(iso) + 1).toISOString();
  // Past 9999-12-31T23:59:59.999Z no instant is stored: the bound may stay where it is.
  return /^\d{4}-/.test(next) ? next : iso;
}

/** A list filter with its `updatedAfter` in stored form (canonicalBound), so that it compares as text. */
export function withCanonicalUpdatedAfter<F extends { updatedAfter?: string | undefined }>(filter: F): F {
  if (filter.updatedAfter === undefined) return filter;
  return { ...filter, updatedAfter: canonicalBound(filter.updatedAfter, 'querystring.updatedAfter') };
}
