// Rate limits as a client meets them: the RateLimit fields on answers, 429 problems with
// Retry-After, buckets per API key and per client address. In-process counting here; the shared
// Redis counting and its outages are in test/rate-limits/.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { itOnEachDatabase, waitFor } from '../helpers/test-app.js';
import { clientAddressBucket } from '../../src/http/rate-limits.js';
import { bucketPolicy } from '../../src/rate-limits/rate-limiter.js';

/** 12 a minute: buckets of 2, refilled every 10 s. */
const TINY = { env: { WO_RATE_LIMIT_PER_MINUTE: '12' } };

/** The `r` and `t` of a `RateLimit` field. */
function serviceLimit(response: LightMyRequestResponse, policy: string): { remaining: number; seconds: number } {
  const match = new RegExp(`^"${policy}";r=(\\d+);t=(\\d+)$`).exec(String(response.headers.ratelimit));
  assert.ok(match, `RateLimit "${String(response.headers.ratelimit)}" should be a ${policy} service limit`);
  return { remaining: Number(match[1]), seconds: Number(match[2]) };
}

function assertRateLimited(response: LightMyRequestResponse): void {
  assert.equal(response.statusCode, 429);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const body = response.json();
  assert.equal(body.code, 'rate_limited');
  assert.equal(body.type, 'urn:wo:problem:rate_limited');
  const retryAfter = Number(response.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 10, `Retry-After ${String(response.headers['retry-after'])}`);
}

describe('rate limits', () => {
  it('sizes the default bucket at a sixth of 6,000 a minute, refilled every 10 s', () => {
    assert.deepEqual(bucketPolicy(6000), { capacity: 1000, refillSeconds: 10 });
    assert.deepEqual(bucketPolicy(12), { capacity: 2, refillSeconds: 10 });
    assert.deepEqual(bucketPolicy(1), { capacity: 1, refillSeconds: 10 });
  });

  itOnEachDatabase('states the key’s bucket in RateLimit-Policy and RateLimit on every answer to an authenticated request, errors included', async ({ newTenant }) => {
    const tenant = await newTenant(['records:read']);
    const answers = [
      await tenant.request({ method: 'GET', url: '/api/v1/records' }),
      await tenant.request({ method: 'GET', url: '/api/v1/records/rec_00000000000000000000000000' }),
      await tenant.request({ method: 'POST', url: '/api/v1/categories', payload: { name: 'No scope for this' } }),
      await tenant.request({ method: 'GET', url: '/api/v1/records?limit=500' }),
    ];
    assert.deepEqual(answers.map((a) => a.statusCode), [200, 404, 403, 400]);
    answers.forEach((answer, i) => {
      assert.equal(answer.headers['ratelimit-policy'], '"api-key";q=1000;w=10');
      const limit = serviceLimit(answer, 'api-key');
      assert.equal(limit.remaining, 999 - i);
      assert.ok(limit.seconds >= 1 && limit.seconds <= 10);
    });
  });

  itOnEachDatabase('answers 429 rate_limited with Retry-After once a key’s bucket is empty, leaving other keys their own', async ({ newTenant }) => {
    const [busy, quiet] = [await newTenant(), await newTenant()];
    const list = { method: 'GET' as const, url: '/api/v1/records' };
    assert.equal((await busy.request(list)).statusCode, 200);
    assert.equal((await busy.request(list)).statusCode, 200);
    const refused = await busy.request(list);
    assertRateLimited(refused);
    assert.equal(serviceLimit(refused, 'api-key').remaining, 0);
    assert.match(refused.json().detail, /This API key has used its 2 requests/);
    assert.equal((await busy.request({ method: 'POST', url: '/api/v1/categories', payload: { name: 'Plumbing' }, headers: { 'idempotency-key': 'k1' } })).statusCode, 429);
    assert.equal((await quiet.request(list)).statusCode, 200);
  }, TINY);

  itOnEachDatabase('serves a key again once Retry-After has passed', async ({ newTenant }) => {
    const tenant = await newTenant();
    const list = { method: 'GET' as const, url: '/api/v1/records' };
    await tenant.request(list);
    await tenant.request(list);
    const refused = await tenant.request(list);
    assertRateLimited(refused);
    const refilledBy = Date.now() + Number(refused.headers['retry-after']) * 1000;
    const served = await waitFor(async () => {
      const answer = await tenant.request(list);
      return answer.statusCode === 200 ? answer : undefined;
    }, 12_000, 'the bucket to be refilled');
    assert.ok(Date.now() <= refilledBy + 1_000, 'served again no later than Retry-After said');
    assert.equal(serviceLimit(served, 'api-key').remaining, 1);
  }, TINY);

  itOnEachDatabase('counts no 304 against the budget: many revalidations leave it as it was, while full answers spend it', async ({ newTenant }) => {
    const tenant = await newTenant();
    // The key's bucket (of 5) starts with this request: the test ends long before its 10 s refill.
    const created = await tenant.request({ method: 'POST', url: '/api/v1/categories', payload: { name: 'Plumbing' } });
    assert.equal(created.statusCode, 201, created.body);
    const url = `/api/v1/categories/${created.json().id}`;
    const read = await tenant.request({ method: 'GET', url });
    assert.equal(serviceLimit(read, 'api-key').remaining, 3);
    const revalidate = () => tenant.request({ method: 'GET', url, headers: { 'if-none-match': String(read.headers.etag) } });
    for (let i = 0; i < 20; i++) {
      const notModified = await revalidate();
      assert.equal(notModified.statusCode, 304, `revalidation ${i + 1}`);
      assert.equal(serviceLimit(notModified, 'api-key').remaining, 3, 'the RateLimit field states the bucket after the refund');
    }
    assert.equal(serviceLimit(await tenant.request({ method: 'GET', url }), 'api-key').remaining, 2);
    assert.equal(serviceLimit(await tenant.request({ method: 'GET', url }), 'api-key').remaining, 1);
    // The last token too comes back from a 304.
    for (let i = 0; i < 5; i++) assert.equal(serviceLimit(await revalidate(), 'api-key').remaining, 1);
    assert.equal(serviceLimit(await tenant.request({ method: 'GET', url }), 'api-key').remaining, 0);
    // An empty bucket refuses a revalidation as any request: it is charged before any work, and refunded only as a 304.
    assertRateLimited(await revalidate());
    assertRateLimited(await tenant.request({ method: 'GET', url }));
  }, { env: { WO_RATE_LIMIT_PER_MINUTE: '30' } });

  itOnEachDatabase('charges requests without a valid key to the client address, failed authentications included, never locking out a valid key', async ({ app, newTenant }) => {
    const tenant = await newTenant();
    const noKey = await app.inject({ method: 'GET', url: '/api/v1/records' });
    assert.equal(noKey.statusCode, 401);
    assert.equal(noKey.headers['ratelimit-policy'], '"client-address";q=2;w=10');
    assert.equal(serviceLimit(noKey, 'client-address').remaining, 1);
    const wrongKey = await app.inject({ method: 'GET', url: '/api/v1/records', headers: { authorization: `Bearer ${tenant.key.slice(0, -2)}xx` } });
    assert.equal(wrongKey.statusCode, 401);
    assert.equal(serviceLimit(wrongKey, 'client-address').remaining, 0);

    const refused = await app.inject({ method: 'GET', url: '/api/v1/records', headers: { authorization: 'Bearer wo_not_a_key' } });
    assertRateLimited(refused);
    assert.match(refused.json().detail, /This client address has used its 2 requests/);
    assertRateLimited(await app.inject({ method: 'GET', url: '/api/v1/openapi.json' }));
    assertRateLimited(await app.inject({ method: 'GET', url: '/no/such/route' }));

    const valid = await tenant.request({ method: 'GET', url: '/api/v1/records' });
    assert.equal(valid.statusCode, 200, 'the key is charged to its own bucket');
    assert.equal(serviceLimit(valid, 'api-key').remaining, 1);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1/openapi.json', remoteAddress: '192.0.2.7' })).statusCode, 200, 'another address has its own bucket');
  }, TINY);

  itOnEachDatabase('tells clients apart by X-Forwarded-For only behind a trusted proxy', async ({ app }) => {
    const from = (forwardedFor: string) => app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: { 'x-forwarded-for': forwardedFor } });
    assert.equal((await from('198.51.100.1')).statusCode, 200);
    assert.equal((await from('198.51.100.1')).statusCode, 200);
    assertRateLimited(await from('198.51.100.1'));
    assert.equal((await from('198.51.100.2')).statusCode, 200);
  }, { env: { ...TINY.env, WO_TRUST_PROXY: 'true' } });

  itOnEachDatabase('ignores X-Forwarded-For when no proxy is trusted', async ({ app }) => {
    const from = (forwardedFor: string) => app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: { 'x-forwarded-for': forwardedFor } });
    await from('198.51.100.1');
    await from('198.51.100.2');
    assertRateLimited(await from('198.51.100.3'));
  }, TINY);

  itOnEachDatabase('never limits /healthz, /readyz and /metrics, which load balancers and Prometheus poll', async ({ app }) => {
    for (let i = 0; i < 5; i++) {
      for (const url of ['/healthz', '/readyz', '/metrics']) {
        const answer = await app.inject({ method: 'GET', url });
        assert.equal(answer.statusCode, 200, url);
        assert.equal(answer.headers.ratelimit, undefined, url);
      }
    }
  }, TINY);

  itOnEachDatabase('counts refusals in /metrics by partition', async ({ app, newTenant }) => {
    const tenant = await newTenant();
    for (let i = 0; i < 3; i++) await tenant.request({ method: 'GET', url: '/api/v1/records' });
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /^wo_rate_limit_refusals_total\{partition="api-key"\} 1$/m);
  }, TINY);

  itOnEachDatabase('is off when WO_RATE_LIMIT_PER_MINUTE is 0: no RateLimit fields and no 429', async ({ app, newTenant, context }) => {
    assert.equal(context.rateLimiter, undefined);
    const tenant = await newTenant();
    for (let i = 0; i < 30; i++) {
      const answer = await tenant.request({ method: 'GET', url: '/api/v1/records' });
      assert.equal(answer.statusCode, 200);
      assert.equal(answer.headers.ratelimit, undefined);
      assert.equal(answer.headers['ratelimit-policy'], undefined);
      assert.equal((await app.inject({ method: 'GET', url: '/api/v1/records' })).statusCode, 401);
    }
  }, { env: { WO_RATE_LIMIT_PER_MINUTE: '0' } });

  it('gives an IPv6 client one bucket for its /64 and an IPv4-mapped client its IPv4 address', () => {
    assert.equal(clientAddressBucket('203.0.113.9'), '203.0.113.9');
    assert.equal(clientAddressBucket('::ffff:203.0.113.9'), '203.0.113.9');
    assert.equal(clientAddressBucket('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(clientAddressBucket('2001:db8:1:2:bbbb::7'), '2001:db8:1:2::/64');
    assert.notEqual(clientAddressBucket('2001:db8:1:3::1'), clientAddressBucket('2001:db8:1:2::1'));
  });
});
