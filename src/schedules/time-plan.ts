import { Temporal } from 'temporal-polyfill';
import { addDuration, subtractDuration } from './durations.js';
import { parseLocalDateTime, zonedInstant } from './local-time.js';
import { occurrencesBetween, type CalendarTrigger } from './recurrence.js';
import type { UpcomingOccurrence } from './planner.js';

/** A schedule's time-based triggers as stored (validated on every write). */
export type TimeTrigger = CalendarTrigger | IntervalTrigger;
export interface IntervalTrigger {
  type: 'interval';
  every: string;
  start?: string;
  timezone?: string;
}

/** A time-based occurrence with the instant its work order is due for generation (its due instant less the lead time). */
export interface TimedOccurrence extends UpcomingOccurrence {
  readonly generateAt: string;
  /** Which trigger made it; an interval's is replaced by the next one once any trigger generates. */
  readonly from: 'calendar' | 'interval';
}

/** What the time plan reads of a schedule. */
export interface TimePlanInput {
  readonly triggers: readonly TimeTrigger[];
  readonly leadTime: string;
  /** Occurrences due at or before this are decided; null: none yet. */
  readonly plannedThrough: string | null;
  readonly createdAt: string;
  /** The schedule's previous work order, and when it was finished (completed or cancelled), if it was. */
  readonly lastRecord: { readonly id: string; readonly finishedAt: string | null } | null;
}

/** How far past `now` calendar rules are expanded in one look: enough for any lead time a plan uses. */
const FAR_FUTURE = '9999-12-31T23:59:59.999Z';
const EARLIEST = '0001-01-01T00:00:00.000Z';

/**
 * The undecided time-based occurrences whose generation time has come (`generateAt <= now`), oldest
 * first and at most `limit`; two triggers due at the same instant make one occurrence.
 */
export function occurrencesDue(input: TimePlanInput, now: string, limit: number): TimedOccurrence[] {
  return merged(input, now, limit).filter((occurrence) => occurrence.generateAt <= now);
}

/** The next undecided time-based occurrence, whenever its generation time, or null when none is planned. */
export function nextOccurrence(input: TimePlanInput): TimedOccurrence | null {
  return merged(input, FAR_FUTURE, 1)[0] ?? null;
}

/** Forecast: undecided occurrences due in [from, to), at most `limit`, the interval's next one included when it is known. */
export function forecast(input: TimePlanInput, from: string, to: string, limit: number): TimedOccurrence[] {
  return merged(input, FAR_FUTURE, limit, { from, to }).filter((occurrence) => occurrence.dueAt >= from && occurrence.dueAt < to);
}

function merged(input: TimePlanInput, now: string, limit: number, window?: { from: string; to: string }): TimedOccurrence[] {
  const after = input.plannedThrough ?? EARLIEST;
  const byInstant = new Map<string, TimedOccurrence>();
  for (const trigger of input.triggers) {
    const found = trigger.type === 'calendar' ? calendarOccurrences(trigger, input.leadTime, after, now, limit, window) : intervalOccurrence(trigger, input);
    for (const occurrence of found) {
      if (occurrence.dueAt > after && !byInstant.has(occurrence.dueAt)) byInstant.set(occurrence.dueAt, occurrence);
    }
  }
  return [...byInstant.values()].sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0)).slice(0, limit);
}

function calendarOccurrences(trigger: CalendarTrigger, leadTime: string, after: string, now: string, limit: number, window?: { from: string; to: string }): TimedOccurrence[] {
  // Occurrences whose generation time has come are due before now plus the lead time.
  const from = window && window.from > after ? window.from : new Date(Date.parse(after) + 1).toISOString();
  const to = window ? window.to : now === FAR_FUTURE ? FAR_FUTURE : new Date(Date.parse(addDuration(now, leadTime, trigger.timezone)) + 1).toISOString();
  return occurrencesBetween(trigger, from, to, limit).map((occurrence) => ({
    key: occurrence.key,
    dueAt: occurrence.at,
    generateAt: subtractDuration(occurrence.at, leadTime, trigger.timezone),
    from: 'calendar' as const,
  }));
}

/**
 * An interval trigger floats: its next occurrence is `every` after the schedule's previous work
 * order was finished (completed or cancelled), keyed `after:<record id>`; before the first work
 * order, at `start` (or `every` after the schedule was created). None while the previous one is open.
 */
function intervalOccurrence(trigger: IntervalTrigger, input: TimePlanInput): TimedOccurrence[] {
  const zone = trigger.timezone ?? 'UTC';
  let dueAt: string;
  let key: string;
  if (input.lastRecord) {
    if (!input.lastRecord.finishedAt) return [];
    dueAt = addDuration(input.lastRecord.finishedAt, trigger.every, zone);
    key = `after:${input.lastRecord.id}`;
  } else {
    const start = trigger.start ? parseLocalDateTime(trigger.start) : undefined;
    const instant = start && typeof start !== 'string' ? zonedInstant(start, zone).toString({ smallestUnit: 'millisecond' }) : addDuration(input.createdAt, trigger.every, zone);
    dueAt = new Date(instant).toISOString();
    key = Temporal.Instant.from(dueAt).toZonedDateTimeISO(zone).toPlainDateTime().toString({ smallestUnit: 'second' });
  }
  return [{ key, dueAt, generateAt: subtractDuration(dueAt, input.leadTime, zone), from: 'interval' }];
}
