/**
 * ISO 8601 durations (`P7D`, `PT4H`, `P1Y2M3DT4H`, `P2W`) and calendar-aware arithmetic with them,
 * for a schedule's `leadTime` and an interval trigger's `every`.
 *
 * Arithmetic happens in a time zone, as RFC 5545 §3.3.6 and Temporal both do it: years, months,
 * weeks and days move the wall-clock date and keep the wall time (P1D across a DST change is 23 or
 * 25 hours; P1M from January 31 is February 28), then hours, minutes and seconds are exact elapsed
 * time (PT24H is always 24 hours).
 */
import { Temporal } from 'temporal-polyfill';
import type { FieldError } from '../errors.js';
import { clip, formatInstant, parseTimeZone, toInstant } from './local-time.js';

export interface IsoDuration {
  years: number;
  months: number;
  weeks: number;
  days: number;
  hours: number;
  minutes: number;
  /** May carry milliseconds (`PT1.5S`); no other unit takes a fraction. */
  seconds: number;
}

// Whole numbers in every unit, up to 6 digits (a lead time of a million days is a typo, not a plan).
const DURATION = /^P(?:(\d{1,6})Y)?(?:(\d{1,6})M)?(?:(\d{1,6})W)?(?:(\d{1,6})D)?(?:T(?:(\d{1,6})H)?(?:(\d{1,6})M)?(?:(\d{1,6}(?:[.,]\d{1,3})?)S)?)?$/;

/** The duration, or a message an integrator can act on. */
export function parseDuration(value: unknown): IsoDuration | string {
  if (typeof value !== 'string' || value === '') return 'must be an ISO 8601 duration like P7D, PT4H or P1M';
  const text = value.toUpperCase();
  if (/^[+\-\u2212]/.test(text)) return `'${clip(value)}' is negative: durations here count forward, like P7D`;
  const match = DURATION.exec(text);
  if (!match) {
    if (/[.,]\d{4,}S$/.test(text)) return `'${clip(value)}' is finer than a millisecond`;
    if (/\d[.,]\d+[YMWDH]/.test(text)) return `'${clip(value)}' has a fraction: only seconds may have one, so write a smaller unit (PT36H rather than P1.5D)`;
    return `'${clip(value)}' is not an ISO 8601 duration like P7D, PT4H, P1M or P1Y2M3DT4H`;
  }
  if (text === 'P' || text === 'PT') return `'${clip(value)}' names no amount: write at least one, like P7D or PT4H`;
  if (text.endsWith('T')) return `'${clip(value)}' has a T with no hours, minutes or seconds after it`;
  const [years, months, weeks, days, hours, minutes] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const seconds = Number((match[7] ?? '0').replace(',', '.'));
  return { years, months, weeks, days, hours, minutes, seconds };
}

/** Field errors for a duration; `allowZero` for a lead time (`P0D`: create the work order when it is due). */
export function validateDuration(value: unknown, field: string, options: { allowZero?: boolean } = {}): FieldError[] {
  const parsed = parseDuration(value);
  if (typeof parsed === 'string') return [{ field, message: parsed }];
  if (!options.allowZero && isZero(parsed)) return [{ field, message: `'${clip(String(value))}' is zero: an interval must be longer than that` }];
  return [];
}

export function isZero(duration: IsoDuration): boolean {
  return Object.values(duration).every((amount) => amount === 0);
}

/** `instantUtc` plus the duration, as the wall clock in `timeZone` reads it; UTC with milliseconds. */
export function addDuration(instantUtc: string | Date, duration: IsoDuration | string, timeZone: string): string {
  return formatInstant(zoned(instantUtc, timeZone).add(toTemporal(duration)).toInstant());
}

/** `instantUtc` minus the duration: an occurrence's `leadTime` before it. */
export function subtractDuration(instantUtc: string | Date, duration: IsoDuration | string, timeZone: string): string {
  return formatInstant(zoned(instantUtc, timeZone).subtract(toTemporal(duration)).toInstant());
}

function zoned(instantUtc: string | Date, timeZone: string): Temporal.ZonedDateTime {
  const zone = parseTimeZone(timeZone);
  if (typeof zone !== 'string') throw new RangeError(`timeZone ${zone.message}`);
  return toInstant(instantUtc, 'instantUtc').toZonedDateTimeISO(zone);
}

function toTemporal(duration: IsoDuration | string): Temporal.Duration {
  const parsed = typeof duration === 'string' ? parseDuration(duration) : duration;
  if (typeof parsed === 'string') throw new RangeError(`duration ${parsed}`);
  const { seconds, ...rest } = parsed;
  const whole = Math.floor(seconds);
  return Temporal.Duration.from({ ...rest, seconds: whole, milliseconds: Math.round((seconds - whole) * 1000) });
}
