/**
 * Wall-clock time in a schedule's IANA time zone: reading a `start`, naming a zone, and turning a
 * local date-time (an occurrence key) into the instant it stands for.
 */
import { Temporal } from 'temporal-polyfill';

/** `2027-01-04T08:00:00` or `2027-01-04T08:00`: no offset, no zone, no fraction. */
const LOCAL_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

/** The local date-time, or a message saying why `value` is not one. */
export function parseLocalDateTime(value: unknown): Temporal.PlainDateTime | string {
  if (typeof value !== 'string') return 'must be a local date-time like 2027-01-04T08:00:00';
  if (/(Z|[+-]\d{2}(:?\d{2})?|\[.*\])$/i.test(value) && /T/.test(value)) {
    return `'${clip(value)}' has an offset or zone: write the local date-time (like 2027-01-04T08:00:00) and give the zone in timezone`;
  }
  const match = LOCAL_DATE_TIME.exec(value);
  if (!match) return `'${clip(value)}' is not a local date-time like 2027-01-04T08:00:00`;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  try {
    return Temporal.PlainDateTime.from({ year, month, day, hour, minute, second }, { overflow: 'reject' });
  } catch {
    return `'${clip(value)}' is not a date-time that exists on the calendar`;
  }
}

/** The zone's canonical spelling (`europe/berlin` → `Europe/Berlin`), or a message. */
export function parseTimeZone(value: unknown): string | { message: string } {
  if (typeof value !== 'string' || value === '') return { message: 'must be an IANA time zone like Europe/Berlin' };
  // Temporal also takes fixed offsets (+01:00); a schedule needs a zone's rules to follow its DST changes.
  if (/^[+\-\u2212]/.test(value)) return { message: `'${clip(value)}' is an offset, not an IANA time zone: name the zone, like Europe/Berlin` };
  try {
    return Temporal.ZonedDateTime.from({ year: 2000, month: 1, day: 1, timeZone: value }).timeZoneId;
  } catch {
    return { message: `'${clip(value)}' is not an IANA time zone` };
  }
}

/**
 * The instant a local date-time names in a zone, as RFC 5545 §3.3.5 reads it: a time that does not
 * exist (skipped by a spring-forward) takes the offset before the gap, so it moves forward by the
 * gap's length; a time that happens twice (a fall-back) is the first of the two. Temporal calls
 * this disambiguation "compatible".
 */
export function zonedInstant(local: Temporal.PlainDateTime, timeZone: string): Temporal.Instant {
  return local.toZonedDateTime(timeZone, { disambiguation: 'compatible' }).toInstant();
}

/** Two days: more than any zone's offset has ever moved, so no gap or repeat is nearer than that. */
const CHANGE_MARGIN_MS = 2 * 86_400_000;

/**
 * zonedInstant for wall times given as milliseconds on a UTC timeline, fast: asking the zone is slow
 * under the polyfill (it goes through Intl), so the offset is reused while the wall time is well
 * inside the stretch of constant offset it was read for. There a wall time has exactly one instant.
 */
export function wallClockPlacer(timeZone: string): (wallMs: number) => { atMs: number; exists: boolean } {
  let stretch = { fromMs: Number.POSITIVE_INFINITY, toMs: Number.NEGATIVE_INFINITY, offsetMs: 0 };
  return (wallMs) => {
    const guess = wallMs - stretch.offsetMs;
    if (guess >= stretch.fromMs && guess < stretch.toMs) return { atMs: guess, exists: true };
    const local = Temporal.Instant.fromEpochMilliseconds(wallMs).toZonedDateTimeISO('UTC').toPlainDateTime();
    const zoned = local.toZonedDateTime(timeZone, { disambiguation: 'compatible' });
    // 'previous' from a millisecond later, so a change at this very instant counts as the stretch's start.
    const began = zoned.add({ milliseconds: 1 }).getTimeZoneTransition('previous');
    const ends = zoned.getTimeZoneTransition('next');
    stretch = {
      fromMs: (began?.epochMilliseconds ?? Number.NEGATIVE_INFINITY) + CHANGE_MARGIN_MS,
      toMs: (ends?.epochMilliseconds ?? Number.POSITIVE_INFINITY) - CHANGE_MARGIN_MS,
      offsetMs: zoned.offsetNanoseconds / 1e6,
    };
    return { atMs: zoned.epochMilliseconds, exists: zoned.toPlainDateTime().equals(local) };
  };
}

/** Our stored instant form: `2027-01-04T07:00:00.000Z`. */
export function formatInstant(instant: Temporal.Instant): string {
  return instant.toString({ fractionalSecondDigits: 3 });
}

/** An ISO 8601 instant with `Z` or an offset, or a Date; a RangeError names `what` otherwise. */
export function toInstant(value: string | Date, what: string): Temporal.Instant {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new RangeError(`${what} is an invalid Date`);
    return Temporal.Instant.fromEpochMilliseconds(value.getTime());
  }
  try {
    return Temporal.Instant.from(value);
  } catch {
    throw new RangeError(`${what} must be an ISO 8601 instant with Z or an offset, not '${clip(value)}'`);
  }
}

/** Echoed input is cut short so a message stays readable whatever a client sent. */
export function clip(value: string): string {
  return value.length > 40 ? `${value.slice(0, 40)}…` : value;
}
