import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateCalendarTrigger, validateIntervalTrigger, validateLeadTime } from './trigger-validation.js';

const PATH = 'body.triggers.0';
const valid = { rrule: 'FREQ=MONTHLY;BYDAY=1MO', start: '2027-01-04T08:00:00', timezone: 'Europe/Berlin' };

function rruleErrors(rrule: unknown): string[] {
  return validateCalendarTrigger({ ...valid, rrule }, PATH).map((e) => {
    assert.equal(e.field, `${PATH}.rrule`);
    return e.message;
  });
}

describe('calendar trigger validation', () => {
  it('accepts the design example, a zone spelt in any case, a start without seconds, lower-case rule parts and stray spaces', () => {
    assert.deepEqual(validateCalendarTrigger(valid, PATH), []);
    assert.deepEqual(validateCalendarTrigger({ ...valid, timezone: 'europe/berlin', start: '2027-01-04T08:00' }, PATH), []);
    assert.deepEqual(validateCalendarTrigger({ ...valid, rrule: 'freq=monthly;byday=1mo' }, PATH), []);
    assert.deepEqual(validateCalendarTrigger({ ...valid, rrule: 'FREQ=MONTHLY; BYDAY=1MO;' }, PATH), []);
  });

  it('requires FREQ', () => {
    assert.deepEqual(rruleErrors('BYDAY=1MO;COUNT=3'), ['FREQ is required']);
  });

  it('names an unknown rule part and lists the ones RFC 5545 allows', () => {
    assert.deepEqual(rruleErrors('FREQ=DAILY;FOO=1'), ["unknown rule part 'FOO' (RFC 5545 allows FREQ, UNTIL, COUNT, INTERVAL, BYSECOND, BYMINUTE, BYHOUR, BYDAY, BYMONTHDAY, BYYEARDAY, BYWEEKNO, BYMONTH, BYSETPOS, WKST)"]);
    assert.deepEqual(rruleErrors('FREQ=DAILY;HELLO'), ["'HELLO' is not a NAME=VALUE rule part"]);
    assert.deepEqual(rruleErrors('FREQ=DAILY;BYDAY='), ['BYDAY has no value']);
    assert.deepEqual(rruleErrors('FREQ=DAILY;FREQ=WEEKLY'), ['FREQ is given more than once']);
  });

  it('refuses DTSTART inside the rule, since start carries it', () => {
    assert.deepEqual(rruleErrors('DTSTART:20270104T080000\nRRULE:FREQ=DAILY'), ["DTSTART is not allowed in the rule: the trigger's start carries it"]);
    assert.deepEqual(rruleErrors('FREQ=DAILY;DTSTART=20270104T080000'), ["DTSTART is not allowed in the rule: the trigger's start carries it"]);
    assert.deepEqual(rruleErrors('RRULE:FREQ=DAILY'), ["write the rule's value without the RRULE: prefix, like FREQ=MONTHLY;BYDAY=1MO"]);
  });

  it('refuses a rule that has no occurrence at all, or none before its UNTIL', () => {
    assert.deepEqual(rruleErrors('FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30'), ['the rule has no occurrence (like FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30)']);
    assert.deepEqual(rruleErrors('FREQ=MONTHLY;BYMONTH=4,6,9,11;BYMONTHDAY=31'), ['the rule has no occurrence (like FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30)']);
    assert.deepEqual(rruleErrors('FREQ=DAILY;UNTIL=20261231T000000Z'), ['the rule has no occurrence between start and UNTIL']);
  });

  it('refuses frequencies below an hour and values that are not frequencies', () => {
    assert.deepEqual(rruleErrors('FREQ=MINUTELY'), ['FREQ=MINUTELY is not supported: a maintenance schedule repeats at most hourly']);
    assert.deepEqual(rruleErrors('FREQ=FORTNIGHTLY'), ["FREQ must be one of YEARLY, MONTHLY, WEEKLY, DAILY, HOURLY, not 'FORTNIGHTLY'"]);
  });

  it('checks each part\'s values and the combinations RFC 5545 forbids', () => {
    assert.deepEqual(rruleErrors('FREQ=DAILY;INTERVAL=0'), ["INTERVAL must be a whole number from 1 to 9999, not '0'"]);
    assert.deepEqual(rruleErrors('FREQ=DAILY;COUNT=-1'), ["COUNT must be a whole number from 1 to 10000, not '-1'"]);
    assert.deepEqual(rruleErrors('FREQ=MONTHLY;BYMONTHDAY=0'), ["BYMONTHDAY values must be 1 to 31 or -31 to -1, not '0'"]);
    assert.deepEqual(rruleErrors('FREQ=YEARLY;BYMONTH=13'), ["BYMONTH values must be 1 to 12, not '13'"]);
    assert.deepEqual(rruleErrors('FREQ=DAILY;BYHOUR=24'), ["BYHOUR values must be 0 to 23, not '24'"]);
    assert.deepEqual(rruleErrors('FREQ=WEEKLY;BYDAY=MON'), ["BYDAY values must be weekdays (MO, TU, WE, TH, FR, SA, SU), each with an optional ordinal like 1MO or -1FR, not 'MON'"]);
    assert.deepEqual(rruleErrors('FREQ=WEEKLY;BYDAY=1MO'), ['BYDAY with an ordinal (1MO) needs FREQ=MONTHLY or FREQ=YEARLY']);
    assert.deepEqual(rruleErrors('FREQ=WEEKLY;BYMONTHDAY=1'), ['BYMONTHDAY must not be used with FREQ=WEEKLY']);
    assert.deepEqual(rruleErrors('FREQ=MONTHLY;BYYEARDAY=100'), ['BYYEARDAY must not be used with FREQ=MONTHLY']);
    assert.deepEqual(rruleErrors('FREQ=MONTHLY;BYWEEKNO=20'), ['BYWEEKNO may only be used with FREQ=YEARLY']);
    assert.deepEqual(rruleErrors('FREQ=MONTHLY;BYSETPOS=-1'), ['BYSETPOS needs another BYxxx part to select from (like BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1)']);
    assert.deepEqual(rruleErrors('FREQ=WEEKLY;WKST=XX'), ["WKST must be one of MO, TU, WE, TH, FR, SA, SU, not 'XX'"]);
  });

  it('refuses COUNT with UNTIL, and an UNTIL that is neither UTC nor a date', () => {
    assert.deepEqual(rruleErrors('FREQ=DAILY;COUNT=3;UNTIL=20271231T000000Z'), ['COUNT and UNTIL must not both be given']);
    assert.deepEqual(rruleErrors('FREQ=DAILY;UNTIL=20271231T000000'), ['UNTIL must be in UTC, ending in Z (like 20271231T000000Z), or a date (like 20271231)']);
    assert.deepEqual(rruleErrors('FREQ=DAILY;UNTIL=20270231'), ["UNTIL '20270231' is not a date that exists on the calendar"]);
    assert.deepEqual(rruleErrors('FREQ=DAILY;UNTIL=2027-12-31'), ["UNTIL must be a UTC date-time like 20271231T235959Z or a date like 20271231, not '2027-12-31'"]);
  });

  it('says what is wrong with an empty or missing rule', () => {
    assert.deepEqual(rruleErrors(''), ['must be an RRULE like FREQ=MONTHLY;BYDAY=1MO']);
    assert.deepEqual(rruleErrors(undefined), ['must be an RRULE like FREQ=MONTHLY;BYDAY=1MO']);
  });

  it('names a time zone that is not in the IANA database, and refuses a fixed offset', () => {
    assert.deepEqual(validateCalendarTrigger({ ...valid, timezone: 'Europe/Berln' }, PATH), [{ field: `${PATH}.timezone`, message: "'Europe/Berln' is not an IANA time zone" }]);
    assert.deepEqual(validateCalendarTrigger({ ...valid, timezone: '+01:00' }, PATH), [{ field: `${PATH}.timezone`, message: "'+01:00' is an offset, not an IANA time zone: name the zone, like Europe/Berlin" }]);
    assert.deepEqual(validateCalendarTrigger({ ...valid, timezone: '' }, PATH), [{ field: `${PATH}.timezone`, message: 'must be an IANA time zone like Europe/Berlin' }]);
  });

  it('wants start as a local date-time that exists, with no offset', () => {
    const startError = (start: unknown) => validateCalendarTrigger({ ...valid, start }, PATH);
    assert.deepEqual(startError('2027-01-04T08:00:00Z'), [{ field: `${PATH}.start`, message: "'2027-01-04T08:00:00Z' has an offset or zone: write the local date-time (like 2027-01-04T08:00:00) and give the zone in timezone" }]);
    assert.deepEqual(startError('2027-01-04T08:00:00+01:00'), [{ field: `${PATH}.start`, message: "'2027-01-04T08:00:00+01:00' has an offset or zone: write the local date-time (like 2027-01-04T08:00:00) and give the zone in timezone" }]);
    assert.deepEqual(startError('2027-02-30T08:00:00'), [{ field: `${PATH}.start`, message: "'2027-02-30T08:00:00' is not a date-time that exists on the calendar" }]);
    assert.deepEqual(startError('2027-01-04'), [{ field: `${PATH}.start`, message: "'2027-01-04' is not a local date-time like 2027-01-04T08:00:00" }]);
    assert.deepEqual(startError('2027-01-04T08:00:00.5'), [{ field: `${PATH}.start`, message: "'2027-01-04T08:00:00.5' is not a local date-time like 2027-01-04T08:00:00" }]);
    assert.deepEqual(startError(20270104), [{ field: `${PATH}.start`, message: 'must be a local date-time like 2027-01-04T08:00:00' }]);
  });

  it('reports every field\'s problems at once', () => {
    assert.deepEqual(validateCalendarTrigger({ rrule: 'BYDAY=1MO', start: 'tomorrow', timezone: 'Europe/Berln' }, 'body.triggers.2'), [
      { field: 'body.triggers.2.rrule', message: 'FREQ is required' },
      { field: 'body.triggers.2.start', message: "'tomorrow' is not a local date-time like 2027-01-04T08:00:00" },
      { field: 'body.triggers.2.timezone', message: "'Europe/Berln' is not an IANA time zone" },
    ]);
  });

  it('cuts a long echoed value short', () => {
    const [message] = rruleErrors(`FREQ=DAILY;X${'Y'.repeat(200)}=1`);
    assert.ok(message!.length < 300);
    assert.match(message!, /…'/);
  });
});

describe('interval trigger and lead time validation', () => {
  it('wants every as a duration longer than zero', () => {
    assert.deepEqual(validateIntervalTrigger({ every: 'P90D' }, 'body.triggers.1'), []);
    assert.deepEqual(validateIntervalTrigger({ every: 'PT0S' }, 'body.triggers.1'), [{ field: 'body.triggers.1.every', message: "'PT0S' is zero: an interval must be longer than that" }]);
    assert.deepEqual(validateIntervalTrigger({ every: '90 days' }, 'body.triggers.1'), [{ field: 'body.triggers.1.every', message: "'90 days' is not an ISO 8601 duration like P7D, PT4H, P1M or P1Y2M3DT4H" }]);
    assert.deepEqual(validateIntervalTrigger({}, 'body.triggers.1'), [{ field: 'body.triggers.1.every', message: 'must be an ISO 8601 duration like P7D, PT4H or P1M' }]);
  });

  it('takes a lead time of zero, and refuses a negative one', () => {
    assert.deepEqual(validateLeadTime('P0D', 'body.leadTime'), []);
    assert.deepEqual(validateLeadTime('P7D', 'body.leadTime'), []);
    assert.deepEqual(validateLeadTime('-P7D', 'body.leadTime'), [{ field: 'body.leadTime', message: "'-P7D' is negative: durations here count forward, like P7D" }]);
  });
});
