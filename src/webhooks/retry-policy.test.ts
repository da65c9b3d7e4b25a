import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_RETRY_AFTER_MS, backoffMs, classifyStatus, parseRetryAfter, retryDelayMs } from './retry-policy.js';

describe('webhook retry policy', () => {
  it('treats 2xx as success, 3xx, 429 and 5xx as retryable, other 4xx as permanent', () => {
    for (const status of [200, 201, 202, 204, 299]) assert.equal(classifyStatus(status).kind, 'success');
    for (const status of [301, 302, 307, 308, 429, 500, 502, 503, 504]) assert.equal(classifyStatus(status).kind, 'retryable');
    for (const status of [400, 401, 403, 404, 405, 409, 410, 413, 422]) assert.equal(classifyStatus(status).kind, 'permanent');
  });

  it('doubles the backoff with every attempt', () => {
    assert.deepEqual([1, 2, 3].map((n) => backoffMs(n, 30_000)), [30_000, 60_000, 120_000]);
  });

  it('keeps the jitter within ±20 %', () => {
    assert.equal(retryDelayMs(2, 1000, undefined, () => 0), 1600);
    assert.equal(retryDelayMs(2, 1000, undefined, () => 1), 2400);
    assert.equal(retryDelayMs(2, 1000, undefined, () => 0.5), 2000);
  });

  it('never retries sooner than Retry-After asks', () => {
    assert.equal(retryDelayMs(1, 50, 5000, () => 0.5), 5000);
    assert.equal(retryDelayMs(3, 10_000, 1000, () => 0.5), 40_000);
  });

  it('reads Retry-After as seconds or as an HTTP date, and caps it at one hour', () => {
    const now = new Date('2026-01-01T00:00:00.000Z');
    assert.equal(parseRetryAfter('7', now), 7000);
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now), 30_000);
    assert.equal(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('999999', now), MAX_RETRY_AFTER_MS);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
    assert.deepEqual(classifyStatus(429, '3', now), { kind: 'retryable', retryAfterMs: 3000 });
  });
});
