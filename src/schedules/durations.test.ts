import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addDuration, parseDuration, subtractDuration, validateDuration } from './durations.js';

const none = { years: 0, months: 0, weeks: 0, days: 0, hours: 0, minutes: 0, seconds: 0 };

describe('ISO 8601 durations', () => {
  it('reads days, hours, months, years, weeks and all of them together', () => {
    assert.deepEqual(parseDuration('P7D'), { ...none, days: 7 });
    assert.deepEqual(parseDuration('PT4H'), { ...none, hours: 4 });
    assert.deepEqual(parseDuration('P1M'), { ...none, months: 1 });
    assert.deepEqual(parseDuration('P6M'), { ...none, months: 6 });
    assert.deepEqual(parseDuration('P2W'), { ...none, weeks: 2 });
    assert.deepEqual(parseDuration('P1Y2M3DT4H5M6S'), { years: 1, months: 2, weeks: 0, days: 3, hours: 4, minutes: 5, seconds: 6 });
    assert.deepEqual(parseDuration('PT90M'), { ...none, minutes: 90 });
    assert.deepEqual(parseDuration('p7d'), { ...none, days: 7 });
  });

  it('takes a fraction of a second, to the millisecond, and no other fraction', () => {
    assert.deepEqual(parseDuration('PT1.5S'), { ...none, seconds: 1.5 });
    assert.deepEqual(parseDuration('PT0,25S'), { ...none, seconds: 0.25 });
    assert.equal(parseDuration('P1.5D'), "'P1.5D' has a fraction: only seconds may have one, so write a smaller unit (PT36H rather than P1.5D)");
    assert.equal(parseDuration('PT0.5H'), "'PT0.5H' has a fraction: only seconds may have one, so write a smaller unit (PT36H rather than P1.5D)");
    assert.equal(parseDuration('PT1.0001S'), "'PT1.0001S' is finer than a millisecond");
  });

  it('refuses negatives, an empty P, a T with nothing after it, and what is not a duration', () => {
    assert.equal(parseDuration('-P1D'), "'-P1D' is negative: durations here count forward, like P7D");
    assert.equal(parseDuration('P'), "'P' names no amount: write at least one, like P7D or PT4H");
    assert.equal(parseDuration('PT'), "'PT' names no amount: write at least one, like P7D or PT4H");
    assert.equal(parseDuration('P1DT'), "'P1DT' has a T with no hours, minutes or seconds after it");
    assert.match(parseDuration('7D') as string, /is not an ISO 8601 duration like P7D/);
    assert.match(parseDuration('P1H') as string, /is not an ISO 8601 duration/);
    assert.match(parseDuration('P1D1M') as string, /is not an ISO 8601 duration/);
    assert.match(parseDuration('P1234567D') as string, /is not an ISO 8601 duration/);
    assert.equal(parseDuration(''), 'must be an ISO 8601 duration like P7D, PT4H or P1M');
    assert.equal(parseDuration(7), 'must be an ISO 8601 duration like P7D, PT4H or P1M');
  });

  it('gives field errors under the caller\'s path, and refuses zero unless a lead time allows it', () => {
    assert.deepEqual(validateDuration('P90D', 'body.triggers.1.every'), []);
    assert.deepEqual(validateDuration('P1.5D', 'body.triggers.1.every'), [{ field: 'body.triggers.1.every', message: "'P1.5D' has a fraction: only seconds may have one, so write a smaller unit (PT36H rather than P1.5D)" }]);
    assert.deepEqual(validateDuration('P0D', 'body.triggers.1.every'), [{ field: 'body.triggers.1.every', message: "'P0D' is zero: an interval must be longer than that" }]);
    assert.deepEqual(validateDuration('P0D', 'body.leadTime', { allowZero: true }), []);
  });
});

describe('adding and subtracting durations in a time zone', () => {
  it('adds a month to January 31 and lands on February 28, and on February 29 in a leap year', () => {
    assert.equal(addDuration('2027-01-31T08:00:00.000Z', 'P1M', 'Europe/Berlin'), '2027-02-28T08:00:00.000Z');
    assert.equal(addDuration('2028-01-31T08:00:00.000Z', 'P1M', 'Europe/Berlin'), '2028-02-29T08:00:00.000Z');
    assert.equal(subtractDuration('2027-03-31T07:00:00.000Z', 'P1M', 'Europe/Berlin'), '2027-02-28T08:00:00.000Z');
    assert.equal(addDuration('2028-02-29T08:00:00.000Z', 'P1Y', 'Europe/Berlin'), '2029-02-28T08:00:00.000Z');
    assert.equal(addDuration('2027-08-31T06:00:00.000Z', 'P6M', 'Europe/Berlin'), '2028-02-29T07:00:00.000Z');
  });

  it('keeps the wall time when adding days across a DST change, while PT24H is exactly 24 hours', () => {
    // 2027-03-27 12:00 CET in Berlin, the day before the spring-forward.
    assert.equal(addDuration('2027-03-27T11:00:00.000Z', 'P1D', 'Europe/Berlin'), '2027-03-28T10:00:00.000Z'); // 12:00 CEST
    assert.equal(addDuration('2027-03-27T11:00:00.000Z', 'PT24H', 'Europe/Berlin'), '2027-03-28T11:00:00.000Z'); // 13:00 CEST
    assert.equal(addDuration('2027-11-06T16:00:00.000Z', 'P1D', 'America/New_York'), '2027-11-07T17:00:00.000Z'); // 12:00 EST
    assert.equal(addDuration('2027-11-06T16:00:00.000Z', 'PT24H', 'America/New_York'), '2027-11-07T16:00:00.000Z'); // 11:00 EST
    assert.equal(addDuration('2027-10-02T01:00:00.000Z', 'P1W', 'Australia/Sydney'), '2027-10-09T00:00:00.000Z'); // 11:00 AEST → 11:00 AEDT
  });

  it('moves a day step that lands in a spring-forward gap forward by the gap, as occurrences do', () => {
    // 02:30 CET on March 27 plus a day is 02:30 on March 28, which does not exist: 03:30 CEST.
    assert.equal(addDuration('2027-03-27T01:30:00.000Z', 'P1D', 'Europe/Berlin'), '2027-03-28T01:30:00.000Z');
  });

  it('puts a work order a lead time of P7D before its occurrence at the same wall time across a DST change', () => {
    // The occurrence is 2027-04-02 08:00 CEST; a week before is 2027-03-26 08:00 CET.
    assert.equal(subtractDuration('2027-04-02T06:00:00.000Z', 'P7D', 'Europe/Berlin'), '2027-03-26T07:00:00.000Z');
    assert.equal(subtractDuration('2027-04-02T06:00:00.000Z', 'PT168H', 'Europe/Berlin'), '2027-03-26T06:00:00.000Z');
  });

  it('counts an interval of P90D from the last completion, and the calendar units before the time units', () => {
    assert.equal(addDuration('2027-01-15T14:20:00.000Z', 'P90D', 'Europe/Berlin'), '2027-04-15T13:20:00.000Z');
    // One month first (February 28), then a day and four hours.
    assert.equal(addDuration('2027-01-31T08:00:00.000Z', 'P1M1DT4H', 'UTC'), '2027-03-01T12:00:00.000Z');
    assert.equal(addDuration('2027-01-31T08:00:00.000Z', 'PT1.5S', 'UTC'), '2027-01-31T08:00:01.500Z');
  });

  it('takes a Date, and refuses an unknown zone or a bad duration with a RangeError', () => {
    assert.equal(addDuration(new Date('2027-01-01T00:00:00Z'), { ...none, days: 1 }, 'UTC'), '2027-01-02T00:00:00.000Z');
    assert.throws(() => addDuration('2027-01-01T00:00:00Z', 'P1D', 'Mars/Olympus'), /'Mars\/Olympus' is not an IANA time zone/);
    assert.throws(() => addDuration('2027-01-01T00:00:00Z', 'P1.5D', 'UTC'), RangeError);
    assert.throws(() => addDuration('2027-01-01T00:00:00', 'P1D', 'UTC'), /instantUtc must be an ISO 8601 instant/);
  });
});
