/**
 * Field errors for a schedule's calendar and interval triggers, each naming the field path the
 * caller gives (`body.triggers.0` → `body.triggers.0.rrule`), all of them at once.
 */
import type { FieldError } from '../errors.js';
import { validateDuration } from './durations.js';
import { parseLocalDateTime, parseTimeZone } from './local-time.js';
import { firstOccurrence } from './recurrence.js';
import { parseRecurrenceRule } from './rrule-parts.js';

export interface CalendarTriggerInput {
  rrule?: unknown;
  start?: unknown;
  timezone?: unknown;
}

/** `path` is where the trigger sits in the request, like `body.triggers.0`. */
export function validateCalendarTrigger(trigger: CalendarTriggerInput, path: string): FieldError[] {
  const problems: FieldError[] = [];
  const rule = parseRecurrenceRule(trigger.rrule);
  if ('problems' in rule) problems.push(...rule.problems.map((message) => ({ field: `${path}.rrule`, message })));
  const start = parseLocalDateTime(trigger.start);
  if (typeof start === 'string') problems.push({ field: `${path}.start`, message: start });
  const zone = parseTimeZone(trigger.timezone);
  if (typeof zone !== 'string') problems.push({ field: `${path}.timezone`, message: zone.message });
  if (problems.length > 0) return problems;

  const calendar = { type: 'calendar' as const, rrule: trigger.rrule as string, start: trigger.start as string, timezone: zone as string };
  let first: ReturnType<typeof firstOccurrence>;
  try {
    first = firstOccurrence(calendar);
  } catch (error) {
    // rrule-temporal's strict mode found what our own checks did not: its message is the best we have.
    return [{ field: `${path}.rrule`, message: error instanceof Error ? error.message : String(error) }];
  }
  if (first === null) {
    const until = 'until' in rule && rule.until !== undefined;
    return [{ field: `${path}.rrule`, message: until ? 'the rule has no occurrence between start and UNTIL' : 'the rule has no occurrence (like FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30)' }];
  }
  return [];
}

/** An interval trigger's `every`: a duration longer than zero. */
export function validateIntervalTrigger(trigger: { every?: unknown }, path: string): FieldError[] {
  return validateDuration(trigger.every, `${path}.every`);
}

/** A schedule's `leadTime`: a duration, zero allowed (the work order is created when it is due). */
export function validateLeadTime(leadTime: unknown, field: string): FieldError[] {
  return validateDuration(leadTime, field, { allowZero: true });
}
