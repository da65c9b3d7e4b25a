import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalBound } from './clock.js';

describe('filter bounds', () => {
  it('are the stored form of the instant, in UTC with milliseconds', () => {
    assert.equal(canonicalBound('2026-03-01T10:00:00+01:00', 'f'), '2026-03-01T09:00:00.000Z');
    assert.equal(canonicalBound('2026-03-01T09:00:00.042Z', 'f'), '2026-03-01T09:00:00.042Z');
    assert.equal(canonicalBound('2026-03-01T09:00:00.0420000Z', 'f'), '2026-03-01T09:00:00.042Z');
  });

  it('round a bound finer than a millisecond up, so no stored instant before it passes', () => {
    assert.equal(canonicalBound('2026-03-01T09:00:00.0421Z', 'f'), '2026-03-01T09:00:00.043Z');
    assert.equal(canonicalBound('2026-03-01T09:00:00.9999999+00:00', 'f'), '2026-03-01T09:00:01.000Z');
    assert.equal(canonicalBound('9999-12-31T23:59:59.9999Z', 'f'), '9999-12-31T23:59:59.999Z');
  });

  it('refuse what is no instant, naming the field', () => {
    assert.throws(() => canonicalBound('yesterday', 'querystring.updatedAfter'), (error: { extra?: { errors?: { field: string }[] } }) => error.extra?.errors?.[0]?.field === 'querystring.updatedAfter');
  });
});
