import { describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { itOnEachDatabase, recordBody, seedCategory } from '../helpers/test-app.js';
import { ERROR_CODES } from '../../src/errors.js';

function assertProblem(response: LightMyRequestResponse, status: number, code: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const body = response.json();
  assert.deepEqual(
    { type: body.type, status: body.status, code: body.code, hasTitle: typeof body.title === 'string', hasDetail: typeof body.detail === 'string' && body.detail.length > 0 },
    { type: `urn:wo:problem:${code}`, status, code, hasTitle: true, hasDetail: true },
  );
  assert.ok(!/\n\s+at /.test(response.body), 'no stack trace');
  // Where the code is documented: its section of the page the service serves.
  assert.equal(new URL(body.documentationUrl).pathname + new URL(body.documentationUrl).hash, `/docs/errors#${code}`);
  return body;
}

describe('errors are RFC 9457 problem+json', () => {
  itOnEachDatabase('unknown routes answer 404 and known paths with another method 405 with Allow', async ({ app, newTenant }) => {
    const tenant = await newTenant();
    assertProblem(await app.inject({ method: 'GET', url: '/nowhere' }), 404, 'route_not_found');
    assertProblem(await tenant.request({ method: 'GET', url: '/api/v1/nothing-here' }), 404, 'route_not_found');
    const notAllowed = await tenant.request({ method: 'DELETE', url: '/api/v1/records' });
    assertProblem(notAllowed, 405, 'method_not_allowed');
    assert.equal(notAllowed.headers.allow, 'GET, POST');
    const put = await tenant.request({ method: 'PUT', url: '/api/v1/records/rec_01JD3Q4W8Y6V3C0M2ZP4K7N9XA' });
    assertProblem(put, 405, 'method_not_allowed');
    assert.equal(put.headers.allow, 'GET, PATCH');
    // A trailing slash names no route, whatever the method: 404, not a 405 offering the same method.
    for (const [method, url] of [['GET', '/healthz/'], ['GET', '/api/v1/openapi.json/'], ['POST', '/api/v1/records/'], ['HEAD', '/.well-known/jwks.json/'],
      // These match `/records/:id` (and the like) with an empty id: still no route, not a bad id.
      ['GET', '/api/v1/records/'], ['GET', '/api/v1/categories/'], ['PATCH', '/api/v1/assets/'], ['GET', '/api/v1/records/rec_01JD3Q4W8Y6V3C0M2ZP4K7N9XA/comments/']] as const) {
      const slashed = await tenant.request({ method, url });
      assert.equal(slashed.statusCode, 404, `${method} ${url}: ${slashed.body}`);
      if (method !== 'HEAD') assertProblem(slashed, 404, 'route_not_found');
      assert.equal(slashed.headers.allow, undefined);
    }
    assertProblem(await tenant.request({ method: 'DELETE', url: '/api/v1/records/' }), 405, 'method_not_allowed');
  });

  itOnEachDatabase(
    'links every problem to its code’s section of the page of error codes, which the service serves on its public URL',
    async ({ app, newTenant }) => {
      const tenant = await newTenant();
      const missing = assertProblem(await tenant.request({ method: 'GET', url: '/api/v1/records/rec_01KK8TT9ERMGD5DN8VRZKF0EAR' }), 404, 'not_found');
      assert.equal(missing.documentationUrl, 'https://work-orders.example.com/docs/errors#not_found');
      const unauthenticated = assertProblem(await app.inject({ method: 'GET', url: '/api/v1/records' }), 401, 'unauthenticated');
      assert.equal(unauthenticated.documentationUrl, 'https://work-orders.example.com/docs/errors#unauthenticated');
      const page = await app.inject({ method: 'GET', url: new URL(missing.documentationUrl).pathname });
      assert.equal(page.statusCode, 200);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(String(page.headers['content-security-policy']), /default-src 'none'/);
      const sections = [...page.body.matchAll(/<section id="([a-z_]+)"/g)].map((m) => m[1]);
      assert.deepEqual(sections, Object.keys(ERROR_CODES));
      assert.match(page.body, /<section id="not_found"[^>]*>\n<h2 id="not_found-heading"><code>not_found<\/code><\/h2>\n<p class="status">404 · Not found<\/p>/);
    },
    { env: { WO_PUBLIC_URL: 'https://work-orders.example.com' } },
  );

  itOnEachDatabase('refuses application/merge-patch+json on anything but PATCH with 415', async ({ newTenant }) => {
    const tenant = await newTenant();
    const refused = await tenant.request({ method: 'POST', url: '/api/v1/categories', headers: { 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ name: 'x' }) });
    assertProblem(refused, 415, 'unsupported_media_type');
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/categories' })).json().total, 0);
  });

  itOnEachDatabase('malformed JSON, a wrong media type and a body over 1 MiB each get their own problem; an empty body is no body', async ({ newTenant }) => {
    const tenant = await newTenant();
    const post = (payload: string, contentType: string) => tenant.request({ method: 'POST', url: '/api/v1/categories', headers: { 'content-type': contentType }, payload });
    for (const bad of ['{', '{"name":}', 'nul', '[1,2', '"unterminated', '{"__proto__":{"x":1}}']) {
      assertProblem(await post(bad, 'application/json'), 400, 'malformed_json');
    }
    // No body to parse: validation names what the route needs.
    const empty = await post('', 'application/json');
    assertProblem(empty, 400, 'validation_failed');
    assert.deepEqual(empty.json().errors.map((e: { field: string }) => e.field), ['body.name']);
    assertProblem(await post('name=x', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
    assertProblem(await post('name: x', 'text/plain'), 415, 'unsupported_media_type');
    assertProblem(await post(JSON.stringify({ name: 'x'.repeat(1024 * 1024) }), 'application/json'), 413, 'payload_too_large');
  });

  itOnEachDatabase('validation problems list every failing field in errors[]', async ({ newTenant }) => {
    const tenant = await newTenant();
    const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: { address: '', requesterName: 7 } });
    const problem = assertProblem(response, 400, 'validation_failed');
    const fields = problem.errors.map((e: { field: string }) => e.field).sort();
    assert.deepEqual(fields, ['body.address', 'body.categoryId', 'body.description', 'body.requesterName']);
    for (const error of problem.errors) assert.equal(typeof error.message, 'string');
  });

  itOnEachDatabase('no input, however malformed, produces a 500', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const record = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) })).json();
    const targets: [string, string][] = [
      ['POST', '/api/v1/records'],
      ['PATCH', `/api/v1/records/${record.id}`],
      ['POST', `/api/v1/records/${record.id}/assign`],
      ['POST', `/api/v1/records/${record.id}/complete`],
      ['POST', '/api/v1/categories'],
      ['PATCH', `/api/v1/categories/${categoryId}`],
    ];
    const anyJson = fc.jsonValue({ maxDepth: 3 });
    const recordish = fc.record(
      {
        categoryId: fc.oneof(fc.constant(categoryId), fc.string(), anyJson),
        address: fc.oneof(fc.string({ maxLength: 600 }), anyJson),
        requesterName: fc.oneof(fc.string(), anyJson),
        description: fc.oneof(fc.string(), anyJson),
        priority: fc.oneof(fc.constantFrom('LOW', 'HIGH', 'x'), anyJson),
        dueAt: fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.string(), anyJson),
        metadata: anyJson,
        assignee: fc.oneof(fc.string(), anyJson),
        name: fc.oneof(fc.string({ maxLength: 120 }), anyJson),
        resolutionNotes: fc.oneof(fc.string(), anyJson),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...targets), fc.oneof(recordish, anyJson), fc.string({ maxLength: 40 }), async ([method, url], payload, query) => {
        const response = await tenant.request({ method: method as 'POST', url: `${url}?${encodeURIComponent(query)}`, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } });
        assert.ok(response.statusCode < 500, `${method} ${url} ${JSON.stringify(payload)} → ${response.statusCode} ${response.body}`);
        if (response.statusCode >= 400) assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      }),
      { numRuns: 150 },
    );
    for (const url of ['/api/v1/records/%00', '/api/v1/records?status=%00', '/api/v1/records?limit=%00', '/api/v1/records/%FF%FE', `/api/v1/records/${'x'.repeat(5000)}`]) {
      const response = await tenant.request({ method: 'GET', url });
      assert.ok(response.statusCode >= 400 && response.statusCode < 500, `${url} → ${response.statusCode}`);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
    }
    const nulBody = await tenant.request({ method: 'POST', url: '/api/v1/categories', payload: { name: 'a\u0000b' } });
    assertProblem(nulBody, 400, 'validation_failed');
  });
});
