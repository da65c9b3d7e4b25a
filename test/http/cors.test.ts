import { describe } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { itOnEachDatabase, recordBody, seedCategory, type TestApp } from '../helpers/test-app.js';

const APP_ORIGIN = 'https://app.example.com';
const ON = { env: { WO_CORS_ORIGINS: `${APP_ORIGIN}, http://localhost:5173` } };

const corsHeadersOf = (response: LightMyRequestResponse) => Object.keys(response.headers).filter((name) => name.startsWith('access-control-'));

const preflight = (t: TestApp, url: string, method: string, origin = APP_ORIGIN) =>
  t.app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type,idempotency-key' },
  });

/** Every operation of the OpenAPI document, its path parameters filled with a plausible id. */
async function documentedOperations(t: TestApp): Promise<{ method: string; url: string }[]> {
  const document = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(document.paths).flatMap(([template, item]) =>
    Object.keys(item).map((method) => ({ method: method.toUpperCase(), url: template.replace(/\{[^}]+\}/g, 'rec_01JD3Q4W8Y6V3C0M2ZP4K7N9XA') })),
  );
}

describe('CORS', () => {
  itOnEachDatabase('is off when WO_CORS_ORIGINS is unset: no CORS header on any answer, and a preflight is a 405 as before', async (t) => {
    const tenant = await t.newTenant();
    const read = await tenant.request({ method: 'GET', url: '/api/v1/records', headers: { origin: APP_ORIGIN } });
    assert.equal(read.statusCode, 200);
    assert.deepEqual(corsHeadersOf(read), []);
    const asked = await preflight(t, '/api/v1/records', 'POST');
    assert.equal(asked.statusCode, 405);
    assert.equal(asked.headers.allow, 'GET, POST');
    assert.equal(asked.json().code, 'method_not_allowed');
    assert.deepEqual(corsHeadersOf(asked), []);
  });

  itOnEachDatabase(
    'answers the preflight of every API operation from an allowed origin, without a key, naming the methods and headers a client sends',
    async (t) => {
      const operations = await documentedOperations(t);
      assert.ok(operations.length > 30);
      for (const { method, url } of operations) {
        const answer = await preflight(t, url, method);
        assert.equal(answer.statusCode, 204, `${method} ${url}`);
        assert.equal(answer.headers['access-control-allow-origin'], APP_ORIGIN);
        assert.ok((answer.headers['access-control-allow-methods'] as string).split(', ').includes(method), `${method} ${url}`);
      }
      const answer = await preflight(t, '/api/v1/records/rec_01JD3Q4W8Y6V3C0M2ZP4K7N9XA', 'PATCH', 'http://localhost:5173');
      assert.equal(answer.headers['access-control-allow-origin'], 'http://localhost:5173');
      assert.equal(answer.headers['access-control-allow-headers'], 'Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, If-Range, Range, X-Request-Id');
      assert.equal(answer.headers['access-control-max-age'], '600');
      assert.match(answer.headers.vary as string, /Origin/);
      assert.equal(answer.body, '');
    },
    ON,
  );

  itOnEachDatabase(
    'lets an allowed origin read answers, problems included, and the headers a client acts on',
    async (t) => {
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      const created = await tenant.request({
        method: 'POST',
        url: '/api/v1/records',
        payload: recordBody(categoryId),
        headers: { origin: APP_ORIGIN, 'idempotency-key': 'cors-create-1' },
      });
      assert.equal(created.statusCode, 201);
      assert.equal(created.headers['access-control-allow-origin'], APP_ORIGIN);
      const exposed = (created.headers['access-control-expose-headers'] as string).split(', ');
      for (const name of ['ETag', 'Location', 'X-Request-Id', 'X-Idempotent-Replay', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'Accept-Ranges', 'Content-Range', 'Content-Disposition', 'Link', 'Deprecation', 'Sunset']) assert.ok(exposed.includes(name), name);
      assert.equal(created.headers['access-control-allow-credentials'], undefined, 'Bearer keys, never cookies');

      const unauthenticated = await t.app.inject({ method: 'GET', url: '/api/v1/records', headers: { origin: APP_ORIGIN } });
      assert.equal(unauthenticated.statusCode, 401);
      assert.equal(unauthenticated.headers['access-control-allow-origin'], APP_ORIGIN);
      const missing = await t.app.inject({ method: 'GET', url: '/api/v1/nothing-here', headers: { origin: APP_ORIGIN } });
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.headers['access-control-allow-origin'], APP_ORIGIN);
    },
    ON,
  );

  itOnEachDatabase(
    'gives an origin not on the list, a plain OPTIONS and the admin area no CORS at all',
    async (t) => {
      const tenant = await t.newTenant();
      const stranger = await tenant.request({ method: 'GET', url: '/api/v1/records', headers: { origin: 'https://evil.example.com' } });
      assert.equal(stranger.statusCode, 200);
      assert.deepEqual(corsHeadersOf(stranger), []);
      const strangerPreflight = await preflight(t, '/api/v1/records', 'POST', 'https://evil.example.com');
      assert.equal(strangerPreflight.statusCode, 405);
      assert.deepEqual(corsHeadersOf(strangerPreflight), []);

      const plain = await t.app.inject({ method: 'OPTIONS', url: '/api/v1/records' });
      assert.equal(plain.statusCode, 405);
      assert.equal(plain.headers.allow, 'GET, POST');

      for (const url of ['/admin', '/admin/login', '/admin/assets/admin.css']) {
        const page = await t.app.inject({ method: 'GET', url, headers: { origin: APP_ORIGIN } });
        assert.deepEqual(corsHeadersOf(page), [], url);
        assert.equal(page.headers.vary, undefined, url);
        const asked = await preflight(t, url, 'POST');
        assert.notEqual(asked.statusCode, 204, url);
        assert.deepEqual(corsHeadersOf(asked), [], url);
      }
    },
    ON,
  );

  itOnEachDatabase(
    'allows any origin with WO_CORS_ORIGINS=*',
    async (t) => {
      const answer = await preflight(t, '/api/v1/records', 'POST', 'https://anywhere.example.org');
      assert.equal(answer.statusCode, 204);
      assert.equal(answer.headers['access-control-allow-origin'], '*');
      const read = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: { origin: 'https://anywhere.example.org' } });
      assert.equal(read.headers['access-control-allow-origin'], '*');
    },
    { env: { WO_CORS_ORIGINS: '*' } },
  );
});
