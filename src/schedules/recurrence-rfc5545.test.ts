import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { occurrencesBetween, type CalendarTrigger } from './recurrence.js';

// The examples of RFC 5545 §3.8.5.3, in their own zone, checked instant by instant. Expected values
// carry the offset the RFC prints (EDT/EST), so they do not lean on the time zone database under test.
const ZONE = 'America/New_York';
const EDT = '-04:00';
const EST = '-05:00';

function calendar(rrule: string, start: string): CalendarTrigger {
  return { type: 'calendar', rrule, start, timezone: ZONE };
}

/** Dates at `time` local, each group with its offset: [[EDT, ['1997-09-02', …]], [EST, […]]]. */
function at(time: string, ...groups: [string, string[]][]): { key: string; at: string }[] {
  return groups.flatMap(([offset, dates]) => dates.map((date) => ({ key: `${date}T${time}`, at: new Date(`${date}T${time}${offset}`).toISOString() })));
}

function expand(rrule: string, start: string, limit = 200): { key: string; at: string }[] {
  return occurrencesBetween(calendar(rrule, start), '1990-01-01T00:00:00Z', '2030-01-01T00:00:00Z', limit);
}

const days = (prefix: string, list: number[]) => list.map((day) => `${prefix}-${String(day).padStart(2, '0')}`);

describe('calendar triggers, RFC 5545 section 3.8.5.3 examples in America/New_York', () => {
  it('repeats daily for 10 occurrences', () => {
    assert.deepEqual(expand('FREQ=DAILY;COUNT=10', '1997-09-02T09:00:00'), at('09:00:00', [EDT, days('1997-09', [2, 3, 4, 5, 6, 7, 8, 9, 10, 11])]));
  });

  it('repeats daily until December 24, 1997, keeping 09:00 local across the change to EST', () => {
    const got = expand('FREQ=DAILY;UNTIL=19971224T000000Z', '1997-09-02T09:00:00');
    assert.equal(got.length, 113);
    assert.deepEqual(got.slice(53, 55), at('09:00:00', [EDT, ['1997-10-25']], [EST, ['1997-10-26']]));
    assert.deepEqual(got.at(-1), at('09:00:00', [EST, ['1997-12-23']])[0]);
  });

  it('repeats every other day', () => {
    assert.deepEqual(expand('FREQ=DAILY;INTERVAL=2', '1997-09-02T09:00:00', 5), at('09:00:00', [EDT, days('1997-09', [2, 4, 6, 8, 10])]));
  });

  it('repeats every 10 days, 5 occurrences', () => {
    assert.deepEqual(expand('FREQ=DAILY;INTERVAL=10;COUNT=5', '1997-09-02T09:00:00'), at('09:00:00', [EDT, ['1997-09-02', '1997-09-12', '1997-09-22', '1997-10-02', '1997-10-12']]));
  });

  it('repeats every day in January, for 3 years, written yearly and written daily', () => {
    const yearly = expand('FREQ=YEARLY;UNTIL=20000131T140000Z;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA', '1998-01-01T09:00:00');
    const daily = expand('FREQ=DAILY;UNTIL=20000131T140000Z;BYMONTH=1', '1998-01-01T09:00:00');
    const january = (year: number) => days(`${year}-01`, Array.from({ length: 31 }, (_, i) => i + 1));
    assert.deepEqual(yearly, at('09:00:00', [EST, [...january(1998), ...january(1999), ...january(2000)]]));
    assert.deepEqual(daily, yearly);
  });

  it('repeats weekly for 10 occurrences', () => {
    assert.deepEqual(
      expand('FREQ=WEEKLY;COUNT=10', '1997-09-02T09:00:00'),
      at('09:00:00', [EDT, ['1997-09-02', '1997-09-09', '1997-09-16', '1997-09-23', '1997-09-30', '1997-10-07', '1997-10-14', '1997-10-21']], [EST, ['1997-10-28', '1997-11-04']]),
    );
  });

  it('repeats weekly until December 24, 1997', () => {
    const got = expand('FREQ=WEEKLY;UNTIL=19971224T000000Z', '1997-09-02T09:00:00');
    assert.equal(got.length, 17);
    assert.deepEqual(got.at(-1), at('09:00:00', [EST, ['1997-12-23']])[0]);
  });

  it('repeats weekly on Tuesday and Thursday for five weeks, with UNTIL and with COUNT', () => {
    const expected = at('09:00:00', [EDT, ['1997-09-02', '1997-09-04', '1997-09-09', '1997-09-11', '1997-09-16', '1997-09-18', '1997-09-23', '1997-09-25', '1997-09-30', '1997-10-02']]);
    assert.deepEqual(expand('FREQ=WEEKLY;UNTIL=19971007T000000Z;WKST=SU;BYDAY=TU,TH', '1997-09-02T09:00:00'), expected);
    assert.deepEqual(expand('FREQ=WEEKLY;COUNT=10;WKST=SU;BYDAY=TU,TH', '1997-09-02T09:00:00'), expected);
  });

  it('repeats every other week on Monday, Wednesday and Friday until December 24, 1997', () => {
    assert.deepEqual(
      expand('FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000Z;WKST=SU;BYDAY=MO,WE,FR', '1997-09-01T09:00:00'),
      at(
        '09:00:00',
        [EDT, ['1997-09-01', '1997-09-03', '1997-09-05', '1997-09-15', '1997-09-17', '1997-09-19', '1997-09-29', '1997-10-01', '1997-10-03', '1997-10-13', '1997-10-15', '1997-10-17']],
        [EST, ['1997-10-27', '1997-10-29', '1997-10-31', '1997-11-10', '1997-11-12', '1997-11-14', '1997-11-24', '1997-11-26', '1997-11-28', '1997-12-08', '1997-12-10', '1997-12-12', '1997-12-22']],
      ),
    );
  });

  it('repeats every other week on Tuesday and Thursday, for 8 occurrences', () => {
    assert.deepEqual(
      expand('FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH', '1997-09-02T09:00:00'),
      at('09:00:00', [EDT, ['1997-09-02', '1997-09-04', '1997-09-16', '1997-09-18', '1997-09-30', '1997-10-02', '1997-10-14', '1997-10-16']]),
    );
  });

  it('repeats monthly on the first Friday for 10 occurrences', () => {
    assert.deepEqual(
      expand('FREQ=MONTHLY;COUNT=10;BYDAY=1FR', '1997-09-05T09:00:00'),
      at('09:00:00', [EDT, ['1997-09-05', '1997-10-03']], [EST, ['1997-11-07', '1997-12-05', '1998-01-02', '1998-02-06', '1998-03-06', '1998-04-03']], [EDT, ['1998-05-01', '1998-06-05']]),
    );
  });

  it('repeats every other month on the first and last Sunday for 10 occurrences', () => {
    assert.deepEqual(
      expand('FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU', '1997-09-07T09:00:00'),
      at('09:00:00', [EDT, ['1997-09-07', '1997-09-28']], [EST, ['1997-11-02', '1997-11-30', '1998-01-04', '1998-01-25', '1998-03-01', '1998-03-29']], [EDT, ['1998-05-03', '1998-05-31']]),
    );
  });

  it('repeats monthly on the second-to-last Monday for 6 months', () => {
    assert.deepEqual(
      expand('FREQ=MONTHLY;COUNT=6;BYDAY=-2MO', '1997-09-22T09:00:00'),
      at('09:00:00', [EDT, ['1997-09-22', '1997-10-20']], [EST, ['1997-11-17', '1997-12-22', '1998-01-19', '1998-02-16']]),
    );
  });

  it('repeats monthly on the third-to-the-last day of the month', () => {
    assert.deepEqual(
      expand('FREQ=MONTHLY;BYMONTHDAY=-3', '1997-09-28T09:00:00', 6),
      at('09:00:00', [EDT, ['1997-09-28']], [EST, ['1997-10-29', '1997-11-28', '1997-12-29', '1998-01-29', '1998-02-26']]),
    );
  });

  it('repeats monthly on the first and last day of the month for 10 occurrences', () => {
    assert.deepEqual(
      expand('FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1', '1997-09-30T09:00:00'),
      at('09:00:00', [EDT, ['1997-09-30', '1997-10-01']], [EST, ['1997-10-31', '1997-11-01', '1997-11-30', '1997-12-01', '1997-12-31', '1998-01-01', '1998-01-31', '1998-02-01']]),
    );
  });

  it('repeats every 18 months on the 10th through the 15th for 10 occurrences', () => {
    assert.deepEqual(
      expand('FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15', '1997-09-10T09:00:00'),
      at('09:00:00', [EDT, days('1997-09', [10, 11, 12, 13, 14, 15])], [EST, days('1999-03', [10, 11, 12, 13])]),
    );
  });

  it('repeats yearly in June and July for 10 occurrences', () => {
    const years = [1997, 1998, 1999, 2000, 2001];
    assert.deepEqual(expand('FREQ=YEARLY;COUNT=10;BYMONTH=6,7', '1997-06-10T09:00:00'), at('09:00:00', [EDT, years.flatMap((y) => [`${y}-06-10`, `${y}-07-10`])]));
  });

  it('repeats every third year on the 1st, 100th and 200th day for 10 occurrences', () => {
    assert.deepEqual(
      expand('FREQ=YEARLY;INTERVAL=3;COUNT=10;BYYEARDAY=1,100,200', '1997-01-01T09:00:00'),
      [
        ...at('09:00:00', [EST, ['1997-01-01']], [EDT, ['1997-04-10', '1997-07-19']], [EST, ['2000-01-01']], [EDT, ['2000-04-09', '2000-07-18']]),
        ...at('09:00:00', [EST, ['2003-01-01']], [EDT, ['2003-04-10', '2003-07-19']], [EST, ['2006-01-01']]),
      ],
    );
  });

  it('repeats on the Monday of week number 20 and on the 20th Monday of the year', () => {
    assert.deepEqual(expand('FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO', '1997-05-12T09:00:00', 3), at('09:00:00', [EDT, ['1997-05-12', '1998-05-11', '1999-05-17']]));
    assert.deepEqual(expand('FREQ=YEARLY;BYDAY=20MO', '1997-05-19T09:00:00', 3), at('09:00:00', [EDT, ['1997-05-19', '1998-05-18', '1999-05-17']]));
  });

  it('repeats every Thursday in March', () => {
    assert.deepEqual(
      expand('FREQ=YEARLY;BYMONTH=3;BYDAY=TH', '1997-03-13T09:00:00', 11),
      at('09:00:00', [EST, ['1997-03-13', '1997-03-20', '1997-03-27', '1998-03-05', '1998-03-12', '1998-03-19', '1998-03-26', '1999-03-04', '1999-03-11', '1999-03-18', '1999-03-25']]),
    );
  });

  it('repeats every Friday the 13th', () => {
    assert.deepEqual(
      expand('FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13', '1997-09-02T09:00:00', 5),
      at('09:00:00', [EST, ['1998-02-13', '1998-03-13']], [EST, ['1998-11-13']], [EDT, ['1999-08-13', '2000-10-13']]),
    );
  });

  it('repeats on the first Saturday that follows the first Sunday of the month', () => {
    assert.deepEqual(
      expand('FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13', '1997-09-13T09:00:00', 10),
      at('09:00:00', [EDT, ['1997-09-13', '1997-10-11']], [EST, ['1997-11-08', '1997-12-13', '1998-01-10', '1998-02-07', '1998-03-07']], [EDT, ['1998-04-11', '1998-05-09', '1998-06-13']]),
    );
  });

  it('repeats every 4 years on the first Tuesday after a Monday in November, US election day', () => {
    assert.deepEqual(expand('FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8', '1996-11-05T09:00:00', 3), at('09:00:00', [EST, ['1996-11-05', '2000-11-07', '2004-11-02']]));
  });

  it('takes the third instance of Tuesday, Wednesday or Thursday in the month with BYSETPOS, for 3 months', () => {
    assert.deepEqual(expand('FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3', '1997-09-04T09:00:00'), at('09:00:00', [EDT, ['1997-09-04', '1997-10-07']], [EST, ['1997-11-06']]));
  });

  it('takes the second-to-last weekday of the month with BYSETPOS', () => {
    assert.deepEqual(
      expand('FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2', '1997-09-29T09:00:00', 7),
      at('09:00:00', [EDT, ['1997-09-29']], [EST, ['1997-10-30', '1997-11-27', '1997-12-30', '1998-01-29', '1998-02-26', '1998-03-30']]),
    );
  });

  it('repeats every 3 hours from 9:00 until a UTC UNTIL the same day', () => {
    assert.deepEqual(expand('FREQ=HOURLY;INTERVAL=3;UNTIL=19970902T170000Z', '1997-09-02T09:00:00'), [...at('09:00:00', [EDT, ['1997-09-02']]), ...at('12:00:00', [EDT, ['1997-09-02']])]);
  });

  it('repeats every 20 minutes from 9:00 to 16:40 written as DAILY with BYHOUR and BYMINUTE', () => {
    const got = expand('FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16;BYMINUTE=0,20,40', '1997-09-02T09:00:00', 25);
    assert.equal(got.length, 25);
    assert.deepEqual([got[0]!.key, got[1]!.key, got[23]!.key, got[24]!.key], ['1997-09-02T09:00:00', '1997-09-02T09:20:00', '1997-09-02T16:40:00', '1997-09-03T09:00:00']);
  });

  it('changes what a week is with WKST', () => {
    assert.deepEqual(expand('FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO', '1997-08-05T09:00:00'), at('09:00:00', [EDT, ['1997-08-05', '1997-08-10', '1997-08-19', '1997-08-24']]));
    assert.deepEqual(expand('FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU', '1997-08-05T09:00:00'), at('09:00:00', [EDT, ['1997-08-05', '1997-08-17', '1997-08-19', '1997-08-31']]));
  });

  it('ignores an invalid date (February 30) and does not count it', () => {
    assert.deepEqual(
      expand('FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5', '2007-01-15T09:00:00'),
      at('09:00:00', [EST, ['2007-01-15', '2007-01-30', '2007-02-15']], [EDT, ['2007-03-15', '2007-03-30']]),
    );
  });
});
