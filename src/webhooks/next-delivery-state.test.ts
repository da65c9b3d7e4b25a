import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nextDeliveryState } from './next-delivery-state.js';
import { DeadlineError } from './post-webhook.js';
import { classifyStatus, MAX_RETRY_AFTER_MS } from './retry-policy.js';
import { failedSend } from './send-delivery.js';
import { ForbiddenAddressError } from './url-guard.js';

const settings = { maxAttempts: 4, retryBaseMs: 1000, retryFactor: 2 };
const now = new Date('2026-01-01T00:00:00.000Z');
/** No jitter: the wait is exactly the nominal backoff. */
const middle = () => 0.5;
const after = (ms: number) => ({ status: 'pending', nextAttemptAt: new Date(now.getTime() + ms) });

describe('the next state of a webhook delivery', () => {
  it('marks a delivery answered with any 2xx as delivered', () => {
    for (const status of [200, 201, 204, 299]) assert.deepEqual(nextDeliveryState(1, classifyStatus(status, undefined, now), settings, now, middle), { status: 'succeeded' });
    assert.deepEqual(nextDeliveryState(4, classifyStatus(200, undefined, now), settings, now, middle), { status: 'succeeded' });
  });

  it('retries a 5xx, a 429, a time-out and a network error after the exponential backoff', () => {
    const timeout = failedSend(new DeadlineError('no answer within 1000 ms'), 1000).outcome;
    const refused = failedSend(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }), 1000).outcome;
    for (const outcome of [classifyStatus(500, undefined, now), classifyStatus(503, undefined, now), classifyStatus(429, undefined, now), timeout, refused]) {
      assert.deepEqual(nextDeliveryState(1, outcome, settings, now, middle), after(1000));
      assert.deepEqual(nextDeliveryState(2, outcome, settings, now, middle), after(2000));
      assert.deepEqual(nextDeliveryState(3, outcome, settings, now, middle), after(4000));
    }
  });

  it('spreads retries by up to 20 % either side of the backoff', () => {
    assert.deepEqual(nextDeliveryState(2, { kind: 'retryable' }, settings, now, () => 0), after(1600));
    assert.deepEqual(nextDeliveryState(2, { kind: 'retryable' }, settings, now, () => 1), after(2400));
  });

  it('waits as long as Retry-After asks when that is longer than the backoff', () => {
    assert.deepEqual(nextDeliveryState(1, classifyStatus(429, '30', now), settings, now, middle), after(30_000));
    assert.deepEqual(nextDeliveryState(1, classifyStatus(503, 'Thu, 01 Jan 2026 00:01:00 GMT', now), settings, now, middle), after(60_000));
    assert.deepEqual(nextDeliveryState(3, classifyStatus(503, '1', now), settings, now, middle), after(4000));
  });

  it('waits no longer than an hour, whatever Retry-After asks', () => {
    assert.deepEqual(nextDeliveryState(1, classifyStatus(503, '86400', now), settings, now, middle), after(MAX_RETRY_AFTER_MS));
    assert.deepEqual(nextDeliveryState(1, classifyStatus(429, 'Fri, 02 Jan 2026 00:00:00 GMT', now), settings, now, middle), after(MAX_RETRY_AFTER_MS));
  });

  it('fails a delivery for good when its last attempt fails too', () => {
    assert.deepEqual(nextDeliveryState(4, classifyStatus(500, undefined, now), settings, now, middle), { status: 'failed' });
    assert.deepEqual(nextDeliveryState(4, classifyStatus(429, '5', now), settings, now, middle), { status: 'failed' });
    assert.deepEqual(nextDeliveryState(1, { kind: 'retryable' }, { ...settings, maxAttempts: 1 }, now, middle), { status: 'failed' });
  });

  it('fails a delivery at once on a 4xx other than 429, or when the URL guard refuses the receiver', () => {
    for (const status of [400, 401, 403, 404, 410, 422]) assert.deepEqual(nextDeliveryState(1, classifyStatus(status, undefined, now), settings, now, middle), { status: 'failed' });
    const refused = failedSend(new Error('fetch failed', { cause: new ForbiddenAddressError('a private address') }), 1000).outcome;
    assert.deepEqual(nextDeliveryState(1, refused, settings, now, middle), { status: 'failed' });
  });

  it('retries a 3xx, since redirects are not followed', () => {
    for (const status of [301, 302, 307, 308]) assert.deepEqual(nextDeliveryState(1, classifyStatus(status, undefined, now), settings, now, middle), after(1000));
  });
});
