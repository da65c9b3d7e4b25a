import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Temporal } from 'temporal-polyfill';
import { firstOccurrence, nextOccurrenceAfter, occurrenceInstant, occurrencesBetween, type CalendarTrigger } from './recurrence.js';

function calendar(rrule: string, start: string, timezone = 'Europe/Berlin'): CalendarTrigger {
  return { type: 'calendar', rrule, start, timezone };
}

function keys(trigger: CalendarTrigger, limit: number, from = '2020-01-01T00:00:00Z', to = '2040-01-01T00:00:00Z'): string[] {
  return occurrencesBetween(trigger, from, to, limit).map((o) => o.key);
}

describe('calendar trigger occurrences', () => {
  it('answers the design example: the first Monday of each month at 08:00 in Berlin', () => {
    assert.deepEqual(occurrencesBetween(calendar('FREQ=MONTHLY;BYDAY=1MO', '2027-01-04T08:00:00'), '2027-01-01T00:00:00Z', '2027-04-01T00:00:00Z', 10), [
      { key: '2027-01-04T08:00:00', at: '2027-01-04T07:00:00.000Z' },
      { key: '2027-02-01T08:00:00', at: '2027-02-01T07:00:00.000Z' },
      { key: '2027-03-01T08:00:00', at: '2027-03-01T07:00:00.000Z' },
    ]);
  });

  it('includes an occurrence at fromUtc and excludes one at toUtc, so adjacent windows never share one', () => {
    const trigger = calendar('FREQ=DAILY', '2027-01-04T08:00:00');
    assert.deepEqual(keys(trigger, 10, '2027-01-05T07:00:00.000Z', '2027-01-07T07:00:00.000Z'), ['2027-01-05T08:00:00', '2027-01-06T08:00:00']);
    assert.deepEqual(keys(trigger, 10, '2027-01-05T07:00:00.001Z', '2027-01-07T07:00:00.001Z'), ['2027-01-06T08:00:00', '2027-01-07T08:00:00']);
  });

  it('stops at the limit, answers nothing for a limit of 0 or an empty window, and refuses a limit out of range', () => {
    const trigger = calendar('FREQ=DAILY', '2027-01-04T08:00:00');
    assert.equal(keys(trigger, 3).length, 3);
    assert.deepEqual(keys(trigger, 0), []);
    assert.deepEqual(keys(trigger, 5, '2027-02-01T00:00:00Z', '2027-02-01T00:00:00Z'), []);
    assert.throws(() => keys(trigger, -1), RangeError);
    assert.throws(() => keys(trigger, 1.5), RangeError);
    assert.throws(() => keys(trigger, 10_001), RangeError);
  });

  it('finds the next occurrence strictly after an instant, and null once the rule has ended', () => {
    const trigger = calendar('FREQ=WEEKLY;COUNT=3', '2027-01-04T08:00:00');
    assert.deepEqual(nextOccurrenceAfter(trigger, '2027-01-04T07:00:00.000Z'), { key: '2027-01-11T08:00:00', at: '2027-01-11T07:00:00.000Z' });
    assert.deepEqual(nextOccurrenceAfter(trigger, '2027-01-04T06:59:59.999Z'), { key: '2027-01-04T08:00:00', at: '2027-01-04T07:00:00.000Z' });
    assert.deepEqual(nextOccurrenceAfter(trigger, new Date('2020-01-01T00:00:00Z'))?.key, '2027-01-04T08:00:00');
    assert.equal(nextOccurrenceAfter(trigger, '2027-01-18T07:00:00.000Z'), null);
  });

  it('does not answer start itself when the rule does not name it', () => {
    // 2027-01-06 is a Wednesday: the rule's first Monday after it is the first occurrence.
    assert.deepEqual(firstOccurrence(calendar('FREQ=WEEKLY;BYDAY=MO', '2027-01-06T08:00:00'))?.key, '2027-01-11T08:00:00');
  });

  it('counts COUNT from start, whatever window is asked for', () => {
    const trigger = calendar('FREQ=DAILY;COUNT=5', '2027-01-04T08:00:00');
    assert.deepEqual(keys(trigger, 10, '2027-01-07T00:00:00Z'), ['2027-01-07T08:00:00', '2027-01-08T08:00:00']);
  });

  it('ends at UNTIL inclusive when it is a UTC instant, and with the whole local day when it is a date', () => {
    assert.deepEqual(keys(calendar('FREQ=DAILY;UNTIL=20270106T070000Z', '2027-01-04T08:00:00'), 10), ['2027-01-04T08:00:00', '2027-01-05T08:00:00', '2027-01-06T08:00:00']);
    assert.deepEqual(keys(calendar('FREQ=DAILY;UNTIL=20270106T065959Z', '2027-01-04T08:00:00'), 10), ['2027-01-04T08:00:00', '2027-01-05T08:00:00']);
    // 23:30 in Berlin on January 6 is 22:30Z: still that day, so still in.
    assert.deepEqual(keys(calendar('FREQ=DAILY;UNTIL=20270106', '2027-01-04T23:30:00'), 10), ['2027-01-04T23:30:00', '2027-01-05T23:30:00', '2027-01-06T23:30:00']);
  });

  it('returns quickly with nothing when the rule has no occurrence at all, like February 30', () => {
    const began = performance.now();
    assert.deepEqual(keys(calendar('FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30', '2027-01-04T08:00:00'), 10), []);
    assert.equal(firstOccurrence(calendar('FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30', '2027-01-04T08:00:00')), null);
    assert.ok(performance.now() - began < 5000);
  });

  it('throws a RangeError naming the field for a trigger that was not validated', () => {
    assert.throws(() => keys(calendar('FREQ=DAILY;FOO=1', '2027-01-04T08:00:00'), 1), /rrule: unknown rule part 'FOO'/);
    assert.throws(() => keys(calendar('FREQ=DAILY', '2027-01-04T08:00:00Z'), 1), /start/);
    assert.throws(() => keys(calendar('FREQ=DAILY', '2027-01-04T08:00:00', 'Europe/Berln'), 1), /timezone 'Europe\/Berln' is not an IANA time zone/);
    assert.throws(() => occurrencesBetween(calendar('FREQ=DAILY', '2027-01-04T08:00:00'), 'yesterday', '2027-01-01T00:00:00Z', 1), /fromUtc/);
  });
});

describe('month ends, leap days and BYSETPOS', () => {
  it('skips months without a 31st for BYMONTHDAY=31, and for a monthly rule starting on the 31st', () => {
    const expected = ['2027-01-31', '2027-03-31', '2027-05-31', '2027-07-31', '2027-08-31', '2027-10-31', '2027-12-31'].map((d) => `${d}T09:00:00`);
    assert.deepEqual(keys(calendar('FREQ=MONTHLY;BYMONTHDAY=31', '2027-01-01T09:00:00'), 7), expected);
    assert.deepEqual(keys(calendar('FREQ=MONTHLY', '2027-01-31T09:00:00'), 7), expected);
  });

  it('takes the last day of every month for BYMONTHDAY=-1, February 29 in a leap year', () => {
    assert.deepEqual(keys(calendar('FREQ=MONTHLY;BYMONTHDAY=-1', '2027-11-01T09:00:00'), 5), ['2027-11-30', '2027-12-31', '2028-01-31', '2028-02-29', '2028-03-31'].map((d) => `${d}T09:00:00`));
  });

  it('finds February 29 only in the leap years 2028 and 2032 between 2027 and 2032', () => {
    const expected = ['2028-02-29T09:00:00', '2032-02-29T09:00:00'];
    assert.deepEqual(keys(calendar('FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29', '2027-01-01T09:00:00'), 10, '2027-01-01T00:00:00Z', '2033-01-01T00:00:00Z'), expected);
    assert.deepEqual(keys(calendar('FREQ=YEARLY', '2028-02-29T09:00:00'), 10, '2027-01-01T00:00:00Z', '2033-01-01T00:00:00Z'), expected);
    assert.deepEqual(keys(calendar('FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-1', '2027-01-01T09:00:00'), 6), ['2027-02-28', '2028-02-29', '2029-02-28', '2030-02-28', '2031-02-28', '2032-02-29'].map((d) => `${d}T09:00:00`));
  });

  it('takes the last workday of each month with BYSETPOS=-1 and the first with BYSETPOS=1', () => {
    assert.deepEqual(
      keys(calendar('FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1', '2027-01-01T16:00:00'), 12).map((k) => k.slice(0, 10)),
      ['2027-01-29', '2027-02-26', '2027-03-31', '2027-04-30', '2027-05-31', '2027-06-30', '2027-07-30', '2027-08-31', '2027-09-30', '2027-10-29', '2027-11-30', '2027-12-31'],
    );
    assert.deepEqual(keys(calendar('FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1', '2027-01-01T07:00:00'), 3).map((k) => k.slice(0, 10)), ['2027-01-01', '2027-02-01', '2027-03-01']);
  });

  it('takes the last and first occurrence of a set of times with BYSETPOS at a daily frequency', () => {
    assert.deepEqual(keys(calendar('FREQ=DAILY;BYHOUR=8,12,16;BYSETPOS=1,-1', '2027-01-04T08:00:00'), 4), ['2027-01-04T08:00:00', '2027-01-04T16:00:00', '2027-01-05T08:00:00', '2027-01-05T16:00:00']);
  });
});

function isSkipped(key: string, timezone: string): boolean {
  const local = Temporal.PlainDateTime.from(key);
  return !local.toZonedDateTime(timezone, { disambiguation: 'compatible' }).toPlainDateTime().equals(local);
}

describe('occurrences, as a property', () => {
  const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Australia/Lord_Howe', 'America/St_Johns', 'Asia/Kolkata', 'Pacific/Chatham', 'Pacific/Apia', 'UTC'];
  const rules = [
    'FREQ=DAILY',
    'FREQ=DAILY;BYHOUR=0,1,2,3;BYMINUTE=0,30',
    'FREQ=HOURLY;INTERVAL=3',
    'FREQ=HOURLY;BYMINUTE=15,45',
    'FREQ=WEEKLY;BYDAY=SU,WE',
    'FREQ=MONTHLY;BYMONTHDAY=-1',
    'FREQ=MONTHLY;BYDAY=-1SU',
    'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1',
    'FREQ=YEARLY;BYMONTH=3,10;BYDAY=-1SU',
    'FREQ=DAILY;COUNT=40',
  ];

  /** Windows open shortly before one of the zone's offset changes, where the mapping is hard. */
  function nearChange(timezone: string, year: number, which: number, hours: number): Date {
    let cursor = Temporal.ZonedDateTime.from({ year, month: 1, day: 1, timeZone: timezone });
    for (let i = 0; i <= which; i++) cursor = cursor.getTimeZoneTransition('next') ?? cursor;
    return new Date(cursor.epochMilliseconds + hours * 3_600_000);
  }

  it('are strictly increasing, and each key names its instant in the zone', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.constantFrom(...rules),
        fc.integer({ min: 0, max: 364 }),
        fc.integer({ min: 0, max: 47 }),
        // 2011 holds Samoa's jump across the date line, a whole day skipped.
        fc.record({ year: fc.constantFrom(2011, 2027, 2028, 2029, 2030, 2031), which: fc.integer({ min: 0, max: 2 }), hours: fc.integer({ min: -30, max: 6 }) }),
        (timezone, rrule, dayOfYear, halfHour, window) => {
          const day = new Date(Date.UTC(window.year - 1, 0, 1 + dayOfYear));
          const start = `${day.toISOString().slice(0, 10)}T${String(Math.floor(halfHour / 2)).padStart(2, '0')}:${halfHour % 2 ? '30' : '00'}:00`;
          const from = nearChange(timezone, window.year, window.which, window.hours);
          const trigger = calendar(rrule, start, timezone);
          const got = occurrencesBetween(trigger, from, new Date(from.getTime() + 400 * 86_400_000), 60);
          for (let i = 1; i < got.length; i++) {
            assert.ok(got[i - 1]!.at < got[i]!.at, `${got[i - 1]!.at} before ${got[i]!.at}`);
          }
          for (const occurrence of got) {
            assert.equal(occurrenceInstant(occurrence.key, timezone), occurrence.at);
            assert.ok(occurrence.at >= from.toISOString());
            // A key's instant reads back as the key, unless a spring-forward skipped that wall time.
            const wall = Temporal.Instant.from(occurrence.at).toZonedDateTimeISO(timezone).toPlainDateTime().toString();
            assert.ok(wall === occurrence.key || isSkipped(occurrence.key, timezone), `${occurrence.key} reads back as ${wall}`);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
