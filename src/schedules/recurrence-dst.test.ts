import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { occurrencesBetween } from './recurrence.js';

// Each zone's 2027 changes, with the UTC instants written out by hand:
//   Europe/Berlin     spring 2027-03-28 02:00 CET → 03:00 CEST, fall 2027-10-31 03:00 CEST → 02:00 CET
//   America/New_York  spring 2027-03-14 02:00 EST → 03:00 EDT, fall 2027-11-07 02:00 EDT → 01:00 EST
//   Australia/Sydney  fall 2027-04-04 03:00 AEDT → 02:00 AEST, spring 2027-10-03 02:00 AEST → 03:00 AEDT

function expand(rrule: string, start: string, timezone: string, limit: number): [string, string][] {
  return occurrencesBetween({ type: 'calendar', rrule, start, timezone }, '2027-01-01T00:00:00Z', '2028-01-01T00:00:00Z', limit).map((o) => [o.key, o.at]);
}

describe('calendar triggers across daylight-saving changes', () => {
  describe('a daily 02:30 rule', () => {
    it('moves the skipped 02:30 forward by the gap in Europe/Berlin and takes the first 02:30 on the fall-back day', () => {
      assert.deepEqual(expand('FREQ=DAILY;COUNT=3', '2027-03-27T02:30:00', 'Europe/Berlin', 3), [
        ['2027-03-27T02:30:00', '2027-03-27T01:30:00.000Z'],
        ['2027-03-28T02:30:00', '2027-03-28T01:30:00.000Z'], // 03:30 CEST
        ['2027-03-29T02:30:00', '2027-03-29T00:30:00.000Z'],
      ]);
      assert.deepEqual(expand('FREQ=DAILY;COUNT=3', '2027-10-30T02:30:00', 'Europe/Berlin', 3), [
        ['2027-10-30T02:30:00', '2027-10-30T00:30:00.000Z'],
        ['2027-10-31T02:30:00', '2027-10-31T00:30:00.000Z'], // the first 02:30, still CEST
        ['2027-11-01T02:30:00', '2027-11-01T01:30:00.000Z'],
      ]);
    });

    it('moves the skipped 02:30 forward in America/New_York, where the repeated hour is 01:00 and 02:30 happens once', () => {
      assert.deepEqual(expand('FREQ=DAILY;COUNT=3', '2027-03-13T02:30:00', 'America/New_York', 3), [
        ['2027-03-13T02:30:00', '2027-03-13T07:30:00.000Z'],
        ['2027-03-14T02:30:00', '2027-03-14T07:30:00.000Z'], // 03:30 EDT
        ['2027-03-15T02:30:00', '2027-03-15T06:30:00.000Z'],
      ]);
      assert.deepEqual(expand('FREQ=DAILY;COUNT=3', '2027-11-06T02:30:00', 'America/New_York', 3), [
        ['2027-11-06T02:30:00', '2027-11-06T06:30:00.000Z'],
        ['2027-11-07T02:30:00', '2027-11-07T07:30:00.000Z'],
        ['2027-11-08T02:30:00', '2027-11-08T07:30:00.000Z'],
      ]);
    });

    it('takes the first of the two 01:30s on the America/New_York fall-back day', () => {
      assert.deepEqual(expand('FREQ=DAILY;COUNT=3', '2027-11-06T01:30:00', 'America/New_York', 3), [
        ['2027-11-06T01:30:00', '2027-11-06T05:30:00.000Z'],
        ['2027-11-07T01:30:00', '2027-11-07T05:30:00.000Z'], // EDT, not the EST one an hour later
        ['2027-11-08T01:30:00', '2027-11-08T06:30:00.000Z'],
      ]);
    });

    it('takes the first 02:30 on the Australia/Sydney fall-back day and moves the skipped one forward in October', () => {
      assert.deepEqual(expand('FREQ=DAILY;COUNT=3', '2027-04-03T02:30:00', 'Australia/Sydney', 3), [
        ['2027-04-03T02:30:00', '2027-04-02T15:30:00.000Z'],
        ['2027-04-04T02:30:00', '2027-04-03T15:30:00.000Z'], // AEDT, the first 02:30
        ['2027-04-05T02:30:00', '2027-04-04T16:30:00.000Z'],
      ]);
      assert.deepEqual(expand('FREQ=DAILY;COUNT=3', '2027-10-02T02:30:00', 'Australia/Sydney', 3), [
        ['2027-10-02T02:30:00', '2027-10-01T16:30:00.000Z'],
        ['2027-10-03T02:30:00', '2027-10-02T16:30:00.000Z'], // 03:30 AEDT
        ['2027-10-04T02:30:00', '2027-10-03T15:30:00.000Z'],
      ]);
    });
  });

  describe('a daily 08:00 rule', () => {
    it('stays at 08:00 local in Europe/Berlin on both change days', () => {
      assert.deepEqual(expand('FREQ=DAILY;COUNT=2', '2027-03-27T08:00:00', 'Europe/Berlin', 2), [
        ['2027-03-27T08:00:00', '2027-03-27T07:00:00.000Z'],
        ['2027-03-28T08:00:00', '2027-03-28T06:00:00.000Z'],
      ]);
      assert.deepEqual(expand('FREQ=DAILY;COUNT=2', '2027-10-30T08:00:00', 'Europe/Berlin', 2), [
        ['2027-10-30T08:00:00', '2027-10-30T06:00:00.000Z'],
        ['2027-10-31T08:00:00', '2027-10-31T07:00:00.000Z'],
      ]);
    });

    it('stays at 08:00 local in America/New_York on both change days', () => {
      assert.deepEqual(expand('FREQ=DAILY;COUNT=2', '2027-03-13T08:00:00', 'America/New_York', 2), [
        ['2027-03-13T08:00:00', '2027-03-13T13:00:00.000Z'],
        ['2027-03-14T08:00:00', '2027-03-14T12:00:00.000Z'],
      ]);
      assert.deepEqual(expand('FREQ=DAILY;COUNT=2', '2027-11-06T08:00:00', 'America/New_York', 2), [
        ['2027-11-06T08:00:00', '2027-11-06T12:00:00.000Z'],
        ['2027-11-07T08:00:00', '2027-11-07T13:00:00.000Z'],
      ]);
    });

    it('stays at 08:00 local in Australia/Sydney on both change days', () => {
      assert.deepEqual(expand('FREQ=DAILY;COUNT=2', '2027-04-03T08:00:00', 'Australia/Sydney', 2), [
        ['2027-04-03T08:00:00', '2027-04-02T21:00:00.000Z'],
        ['2027-04-04T08:00:00', '2027-04-03T22:00:00.000Z'],
      ]);
      assert.deepEqual(expand('FREQ=DAILY;COUNT=2', '2027-10-02T08:00:00', 'Australia/Sydney', 2), [
        ['2027-10-02T08:00:00', '2027-10-01T22:00:00.000Z'],
        ['2027-10-03T08:00:00', '2027-10-02T21:00:00.000Z'],
      ]);
    });
  });

  describe('an hourly rule counts wall-clock hours, so every key names one instant', () => {
    it('goes from 01:00 to 03:00 through the Europe/Berlin gap and passes the repeated 02:00 once', () => {
      assert.deepEqual(expand('FREQ=HOURLY;COUNT=5', '2027-03-28T00:00:00', 'Europe/Berlin', 5), [
        ['2027-03-28T00:00:00', '2027-03-27T23:00:00.000Z'],
        ['2027-03-28T01:00:00', '2027-03-28T00:00:00.000Z'],
        // 02:00 does not exist: it would be 03:00 CEST, which the rule names itself.
        ['2027-03-28T03:00:00', '2027-03-28T01:00:00.000Z'],
        ['2027-03-28T04:00:00', '2027-03-28T02:00:00.000Z'],
        ['2027-03-28T05:00:00', '2027-03-28T03:00:00.000Z'],
      ]);
      assert.deepEqual(expand('FREQ=HOURLY;COUNT=5', '2027-10-31T00:00:00', 'Europe/Berlin', 5), [
        ['2027-10-31T00:00:00', '2027-10-30T22:00:00.000Z'],
        ['2027-10-31T01:00:00', '2027-10-30T23:00:00.000Z'],
        ['2027-10-31T02:00:00', '2027-10-31T00:00:00.000Z'], // CEST; the CET 02:00 at 01:00Z is the same key
        ['2027-10-31T03:00:00', '2027-10-31T02:00:00.000Z'],
        ['2027-10-31T04:00:00', '2027-10-31T03:00:00.000Z'],
      ]);
    });

    it('does the same in America/New_York', () => {
      assert.deepEqual(expand('FREQ=HOURLY;COUNT=4', '2027-03-14T00:00:00', 'America/New_York', 4), [
        ['2027-03-14T00:00:00', '2027-03-14T05:00:00.000Z'],
        ['2027-03-14T01:00:00', '2027-03-14T06:00:00.000Z'],
        ['2027-03-14T03:00:00', '2027-03-14T07:00:00.000Z'],
        ['2027-03-14T04:00:00', '2027-03-14T08:00:00.000Z'],
      ]);
      assert.deepEqual(expand('FREQ=HOURLY;COUNT=4', '2027-11-07T00:00:00', 'America/New_York', 4), [
        ['2027-11-07T00:00:00', '2027-11-07T04:00:00.000Z'],
        ['2027-11-07T01:00:00', '2027-11-07T05:00:00.000Z'],
        ['2027-11-07T02:00:00', '2027-11-07T07:00:00.000Z'],
        ['2027-11-07T03:00:00', '2027-11-07T08:00:00.000Z'],
      ]);
    });

    it('does the same in Australia/Sydney', () => {
      assert.deepEqual(expand('FREQ=HOURLY;COUNT=4', '2027-04-04T00:00:00', 'Australia/Sydney', 4), [
        ['2027-04-04T00:00:00', '2027-04-03T13:00:00.000Z'],
        ['2027-04-04T01:00:00', '2027-04-03T14:00:00.000Z'],
        ['2027-04-04T02:00:00', '2027-04-03T15:00:00.000Z'],
        ['2027-04-04T03:00:00', '2027-04-03T17:00:00.000Z'],
      ]);
      assert.deepEqual(expand('FREQ=HOURLY;COUNT=4', '2027-10-03T00:00:00', 'Australia/Sydney', 4), [
        ['2027-10-03T00:00:00', '2027-10-02T14:00:00.000Z'],
        ['2027-10-03T01:00:00', '2027-10-02T15:00:00.000Z'],
        ['2027-10-03T03:00:00', '2027-10-02T16:00:00.000Z'],
        ['2027-10-03T04:00:00', '2027-10-02T17:00:00.000Z'],
      ]);
    });
  });

  it('answers in instant order when a skipped time lands after a later wall time, once per instant', () => {
    const got = expand('FREQ=DAILY;BYHOUR=1,2,3;BYMINUTE=0,30', '2027-03-28T01:00:00', 'Europe/Berlin', 4);
    assert.deepEqual(got, [
      ['2027-03-28T01:00:00', '2027-03-28T00:00:00.000Z'],
      ['2027-03-28T01:30:00', '2027-03-28T00:30:00.000Z'],
      // 02:00 and 02:30 land on 03:00 and 03:30 CEST, which the rule names too.
      ['2027-03-28T03:00:00', '2027-03-28T01:00:00.000Z'],
      ['2027-03-28T03:30:00', '2027-03-28T01:30:00.000Z'],
    ]);
  });

  it('keeps a skipped time that no other wall time claims, under its own key', () => {
    assert.deepEqual(expand('FREQ=DAILY;BYHOUR=1,2;BYMINUTE=30', '2027-03-28T01:30:00', 'Europe/Berlin', 3), [
      ['2027-03-28T01:30:00', '2027-03-28T00:30:00.000Z'],
      ['2027-03-28T02:30:00', '2027-03-28T01:30:00.000Z'], // 03:30 CEST
      ['2027-03-29T01:30:00', '2027-03-28T23:30:00.000Z'],
    ]);
  });

  it('folds a day skipped whole (Samoa crossing the date line in 2011) into the next day\'s occurrence', () => {
    const got = occurrencesBetween({ type: 'calendar', rrule: 'FREQ=DAILY;COUNT=4', start: '2011-12-28T09:00:00', timezone: 'Pacific/Apia' }, '2011-01-01T00:00:00Z', '2013-01-01T00:00:00Z', 10);
    assert.deepEqual(got.map((o) => [o.key, o.at]), [
      ['2011-12-28T09:00:00', '2011-12-28T19:00:00.000Z'],
      ['2011-12-29T09:00:00', '2011-12-29T19:00:00.000Z'],
      // December 30 did not exist: its 09:00, read with the offset before (-10), is December 31 09:00 (+14).
      ['2011-12-31T09:00:00', '2011-12-30T19:00:00.000Z'],
      ['2012-01-01T09:00:00', '2011-12-31T19:00:00.000Z'],
    ]);
  });
});
