import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../config.js';
import { MAX_RETRY_AFTER_MS, backoffMs, classifyStatus, longestRetryWindowMs, parseRetryAfter, retryDelayMs, shortestRetryWindowMs } from './retry-policy.js';

const MINUTE = 60_000;

describe('webhook retry policy', () => {
  it('treats 2xx as success, 3xx, 429 and 5xx as retryable, other 4xx as permanent', () => {
    for (const status of [200, 201, 202, 204, 299]) assert.equal(classifyStatus(status).kind, 'success');
    for (const status of [301, 302, 307, 308, 429, 500, 502, 503, 504]) assert.equal(classifyStatus(status).kind, 'retryable');
    for (const status of [400, 401, 403, 404, 405, 409, 410, 413, 422]) assert.equal(classifyStatus(status).kind, 'permanent');
  });

  it('multiplies the backoff by the factor with every attempt', () => {
    assert.deepEqual([1, 2, 3].map((n) => backoffMs(n, { retryBaseMs: 30_000, retryFactor: 2 })), [30_000, 60_000, 120_000]);
    assert.deepEqual([1, 2, 3].map((n) => backoffMs(n, { retryBaseMs: 1000, retryFactor: 3 })), [1000, 3000, 9000]);
  });

  it('waits 5, 20 and 80 minutes by default, so the 4 attempts outlast more than an hour of receiver downtime even with the jitter', () => {
    const { webhooks } = loadConfig({});
    assert.deepEqual([1, 2, 3].map((n) => backoffMs(n, webhooks) / MINUTE), [5, 20, 80]);
    assert.equal(webhooks.maxAttempts, 4);
    assert.equal(shortestRetryWindowMs(webhooks, webhooks.maxAttempts), 84 * MINUTE);
    assert.ok(shortestRetryWindowMs(webhooks, webhooks.maxAttempts) >= 60 * MINUTE);
    // The soonest and the latest each retry can come, as docs/webhooks.md states them.
    assert.deepEqual([1, 2, 3].map((n) => retryDelayMs(n, webhooks, undefined, () => 0) / MINUTE), [4, 16, 64]);
    assert.deepEqual([1, 2, 3].map((n) => retryDelayMs(n, webhooks, undefined, () => 1) / MINUTE), [6, 24, 96]);
  });

  it('takes the base and the factor from WO_WEBHOOK_RETRY_BASE_MS and WO_WEBHOOK_RETRY_FACTOR', () => {
    const { webhooks } = loadConfig({ WO_WEBHOOK_RETRY_BASE_MS: '50', WO_WEBHOOK_RETRY_FACTOR: '2' });
    assert.deepEqual([1, 2, 3].map((n) => backoffMs(n, webhooks)), [50, 100, 200]);
    assert.throws(() => loadConfig({ WO_WEBHOOK_RETRY_FACTOR: '0' }), /WO_WEBHOOK_RETRY_FACTOR/);
  });

  it('keeps the jitter within ±20 %', () => {
    const schedule = { retryBaseMs: 1000, retryFactor: 2 };
    assert.equal(retryDelayMs(2, schedule, undefined, () => 0), 1600);
    assert.equal(retryDelayMs(2, schedule, undefined, () => 1), 2400);
    assert.equal(retryDelayMs(2, schedule, undefined, () => 0.5), 2000);
  });

  it('never retries sooner than Retry-After asks', () => {
    assert.equal(retryDelayMs(1, { retryBaseMs: 50, retryFactor: 4 }, 5000, () => 0.5), 5000);
    assert.equal(retryDelayMs(3, { retryBaseMs: 10_000, retryFactor: 2 }, 1000, () => 0.5), 40_000);
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

  it('bounds the time from first to last attempt by every wait jittered up or held back by a capped Retry-After', () => {
    const { webhooks } = loadConfig({});
    // max(6 min, 1 h) + max(24 min, 1 h) + max(96 min, 1 h)
    assert.equal(longestRetryWindowMs(webhooks, webhooks.maxAttempts), 216 * MINUTE);
    const quick = { retryBaseMs: 50, retryFactor: 4 };
    assert.equal(longestRetryWindowMs(quick, 4), 3 * MAX_RETRY_AFTER_MS);
    for (let n = 0; n < 200; n++) {
      const worst = [1, 2, 3].reduce((sum, attempt) => sum + retryDelayMs(attempt, webhooks, MAX_RETRY_AFTER_MS, Math.random), 0);
      assert.ok(worst <= longestRetryWindowMs(webhooks, webhooks.maxAttempts) + 3);
    }
  });
});
