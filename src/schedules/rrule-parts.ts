/**
 * Reads an RRULE value (RFC 5545 §3.3.10) and checks it the way the RFC states it, part by part,
 * so an integrator learns what is wrong in words. rrule-temporal accepts unknown parts and, unless
 * strict, several combinations the RFC forbids (BYMONTHDAY with WEEKLY, COUNT with UNTIL): the
 * checks are ours.
 */
import { Temporal } from 'temporal-polyfill';
import { clip } from './local-time.js';

export type Frequency = 'YEARLY' | 'MONTHLY' | 'WEEKLY' | 'DAILY' | 'HOURLY';

/** Where UNTIL ends the rule: at a UTC instant (inclusive), or at the end of a local date. */
export type Until = { kind: 'instant'; instant: Temporal.Instant } | { kind: 'date'; date: Temporal.PlainDate };

export interface RecurrenceRule {
  freq: Frequency;
  /**
   * The rule without COUNT and UNTIL, for the expander. We bound it ourselves: UNTIL is an instant,
   * and COUNT counts instants, of which two wall times can share one near a spring-forward.
   */
  expandable: string;
  count?: number;
  until?: Until;
}

const FREQUENCIES: readonly Frequency[] = ['YEARLY', 'MONTHLY', 'WEEKLY', 'DAILY', 'HOURLY'];
const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
const PART_NAMES = ['FREQ', 'UNTIL', 'COUNT', 'INTERVAL', 'BYSECOND', 'BYMINUTE', 'BYHOUR', 'BYDAY', 'BYMONTHDAY', 'BYYEARDAY', 'BYWEEKNO', 'BYMONTH', 'BYSETPOS', 'WKST'];

/** Each list part's allowed values: [least, greatest, whether negatives count from the end]. */
const LIST_RANGES: Record<string, [number, number, boolean]> = {
  BYSECOND: [0, 60, false],
  BYMINUTE: [0, 59, false],
  BYHOUR: [0, 23, false],
  BYMONTHDAY: [1, 31, true],
  BYYEARDAY: [1, 366, true],
  BYWEEKNO: [1, 53, true],
  BYMONTH: [1, 12, false],
  BYSETPOS: [1, 366, true],
};

/** The rule, or every problem found in it (messages name the rule part, as an integrator wrote it). */
export function parseRecurrenceRule(value: unknown): RecurrenceRule | { problems: string[] } {
  if (typeof value !== 'string' || value.trim() === '') return { problems: ['must be an RRULE like FREQ=MONTHLY;BYDAY=1MO'] };
  const text = value.trim().toUpperCase();
  // Rule part names and values are case-insensitive (RFC 5545 §3.1): FREQ=monthly is FREQ=MONTHLY.
  if (/DTSTART/.test(text)) return { problems: ['DTSTART is not allowed in the rule: the trigger\'s start carries it'] };
  if (/[\r\n]/.test(text)) return { problems: ['must be one RRULE value on one line (RDATE and EXDATE are not supported)'] };
  if (text.startsWith('RRULE:')) return { problems: ['write the rule\'s value without the RRULE: prefix, like FREQ=MONTHLY;BYDAY=1MO'] };

  const problems: string[] = [];
  const parts = new Map<string, string>();
  for (const piece of text.split(';').map((part) => part.trim())) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    const name = eq < 0 ? piece : piece.slice(0, eq);
    const partValue = eq < 0 ? '' : piece.slice(eq + 1);
    if (!PART_NAMES.includes(name)) {
      problems.push(eq < 0 ? `'${clip(piece)}' is not a NAME=VALUE rule part` : `unknown rule part '${clip(name)}' (RFC 5545 allows ${PART_NAMES.join(', ')})`);
    } else if (parts.has(name)) {
      problems.push(`${name} is given more than once`);
    } else if (partValue === '') {
      problems.push(`${name} has no value`);
    } else {
      parts.set(name, partValue);
    }
  }
  if (problems.length > 0) return { problems };

  const freqText = parts.get('FREQ');
  let freq: Frequency | undefined;
  if (freqText === undefined) problems.push('FREQ is required');
  else if (freqText === 'MINUTELY' || freqText === 'SECONDLY') problems.push(`FREQ=${freqText} is not supported: a maintenance schedule repeats at most hourly`);
  else if (!(FREQUENCIES as readonly string[]).includes(freqText)) problems.push(`FREQ must be one of ${FREQUENCIES.join(', ')}, not '${clip(freqText)}'`);
  else freq = freqText as Frequency;

  checkWholeNumber(parts, 'INTERVAL', 9999, problems);
  checkWholeNumber(parts, 'COUNT', 10_000, problems);
  for (const [name, range] of Object.entries(LIST_RANGES)) checkNumberList(parts, name, range, problems);
  checkByDay(parts, freq, problems);
  const wkst = parts.get('WKST');
  if (wkst !== undefined && !WEEKDAYS.includes(wkst)) problems.push(`WKST must be one of ${WEEKDAYS.join(', ')}, not '${clip(wkst)}'`);

  let until: Until | undefined;
  const untilText = parts.get('UNTIL');
  if (untilText !== undefined) {
    const parsed = parseUntil(untilText);
    if (typeof parsed === 'string') problems.push(parsed);
    else until = parsed;
  }
  if (parts.has('COUNT') && parts.has('UNTIL')) problems.push('COUNT and UNTIL must not both be given');

  if (freq !== undefined) {
    if (parts.has('BYMONTHDAY') && freq === 'WEEKLY') problems.push('BYMONTHDAY must not be used with FREQ=WEEKLY');
    if (parts.has('BYYEARDAY') && (freq === 'DAILY' || freq === 'WEEKLY' || freq === 'MONTHLY')) problems.push(`BYYEARDAY must not be used with FREQ=${freq}`);
    if (parts.has('BYWEEKNO') && freq !== 'YEARLY') problems.push('BYWEEKNO may only be used with FREQ=YEARLY');
  }
  if (parts.has('BYSETPOS') && ![...parts.keys()].some((name) => name.startsWith('BY') && name !== 'BYSETPOS')) {
    problems.push('BYSETPOS needs another BYxxx part to select from (like BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1)');
  }
  if (problems.length > 0 || freq === undefined) return { problems };

  const count = parts.has('COUNT') ? Number(parts.get('COUNT')) : undefined;
  parts.delete('UNTIL');
  parts.delete('COUNT');
  const expandable = [...parts].map(([name, partValue]) => `${name}=${partValue}`).join(';');
  return { freq, expandable, ...(count === undefined ? {} : { count }), ...(until === undefined ? {} : { until }) };
}

function checkWholeNumber(parts: Map<string, string>, name: string, max: number, problems: string[]): void {
  const text = parts.get(name);
  if (text === undefined) return;
  if (!/^\d{1,6}$/.test(text) || Number(text) < 1 || Number(text) > max) problems.push(`${name} must be a whole number from 1 to ${max}, not '${clip(text)}'`);
}

function checkNumberList(parts: Map<string, string>, name: string, [min, max, signed]: [number, number, boolean], problems: string[]): void {
  const text = parts.get(name);
  if (text === undefined) return;
  const allowed = signed ? `${min} to ${max} or -${max} to -${min}` : `${min} to ${max}`;
  for (const item of text.split(',')) {
    const ok = (signed ? /^[+-]?\d{1,3}$/ : /^\+?\d{1,3}$/).test(item) && Math.abs(Number(item)) >= min && Math.abs(Number(item)) <= max;
    if (!ok) {
      problems.push(`${name} values must be ${allowed}, not '${clip(item)}'`);
      return;
    }
  }
}

function checkByDay(parts: Map<string, string>, freq: Frequency | undefined, problems: string[]): void {
  const text = parts.get('BYDAY');
  if (text === undefined) return;
  for (const item of text.split(',')) {
    const match = /^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/.exec(item);
    if (!match) {
      problems.push(`BYDAY values must be weekdays (MO, TU, WE, TH, FR, SA, SU), each with an optional ordinal like 1MO or -1FR, not '${clip(item)}'`);
      return;
    }
    const ordinal = match[1];
    if (ordinal === undefined) continue;
    if (Number(ordinal) === 0 || Math.abs(Number(ordinal)) > 53) {
      problems.push(`BYDAY ordinals must be 1 to 53 or -53 to -1, not '${clip(item)}'`);
      return;
    }
    if (freq !== undefined && freq !== 'MONTHLY' && freq !== 'YEARLY') {
      problems.push(`BYDAY with an ordinal (${item}) needs FREQ=MONTHLY or FREQ=YEARLY`);
      return;
    }
    if (freq === 'YEARLY' && parts.has('BYWEEKNO')) {
      problems.push(`BYDAY with an ordinal (${item}) must not be used with BYWEEKNO`);
      return;
    }
  }
}

/** RFC 5545 wants UTC (`…Z`) when DTSTART has a zone; a date alone ends the rule with that local day. */
function parseUntil(text: string): Until | string {
  const dateTime = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  const date = /^(\d{4})(\d{2})(\d{2})$/.exec(text);
  try {
    if (dateTime) {
      const [year, month, day, hour, minute, second] = dateTime.slice(1).map(Number) as [number, number, number, number, number, number];
      const local = Temporal.PlainDateTime.from({ year, month, day, hour, minute, second }, { overflow: 'reject' });
      return { kind: 'instant', instant: local.toZonedDateTime('UTC').toInstant() };
    }
    if (date) {
      const [year, month, day] = date.slice(1).map(Number) as [number, number, number];
      return { kind: 'date', date: Temporal.PlainDate.from({ year, month, day }, { overflow: 'reject' }) };
    }
  } catch {
    return `UNTIL '${clip(text)}' is not a date that exists on the calendar`;
  }
  if (/^\d{8}T\d{6}$/.test(text)) return `UNTIL must be in UTC, ending in Z (like ${text}Z), or a date (like ${text.slice(0, 8)})`;
  return `UNTIL must be a UTC date-time like 20271231T235959Z or a date like 20271231, not '${clip(text)}'`;
}
