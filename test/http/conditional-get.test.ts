// GET of one resource answers If-None-Match as its ETag promises (RFC 9110, 13.1.2 and 15.4.5): 304
// Not Modified with no body when a tag it names is current (weak comparison, lists, `*`), the full
// answer otherwise.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { parseEntityTags } from '../../src/http/conditional.js';
import { itOnEachDatabase, recordBody, seedCategory, type Tenant } from '../helpers/test-app.js';

function assertNotModified(response: LightMyRequestResponse, etag: string): void {
  assert.equal(response.statusCode, 304, response.body);
  assert.equal(response.body, '');
  assert.equal(response.headers.etag, etag);
  assert.equal(response.headers['content-type'], undefined);
  assert.equal(response.headers['content-length'], undefined);
  assert.ok(response.headers['x-request-id']);
}

/** One of each resource that answers an ETag, created through the API: its URL and a change to it. */
async function oneOfEach(tenant: Tenant): Promise<{ url: string; change: unknown }[]> {
  const post = async (url: string, payload: unknown) => {
    const response = await tenant.request({ method: 'POST', url, payload: payload as never });
    assert.equal(response.statusCode, 201, response.body);
    return `${url}/${(response.json() as { id: string }).id}`;
  };
  const categoryId = await seedCategory(tenant);
  return [
    { url: `/api/v1/categories/${categoryId}`, change: { description: 'Pipes' } },
    { url: await post('/api/v1/records', recordBody(categoryId)), change: { priority: 'HIGH' } },
    { url: await post('/api/v1/assets', { name: 'Boiler', tag: 'B-1' }), change: { model: 'X2' } },
    { url: await post('/api/v1/locations', { name: 'Harbour site' }), change: { name: 'Harbour yard' } },
    { url: await post('/api/v1/meters', { name: 'Run hours', unit: 'h', kind: 'cumulative' }), change: { name: 'Engine hours' } },
    { url: await post('/api/v1/schedules', { name: 'Filters', template: { categoryId, description: 'Replace' }, triggers: [{ type: 'interval', every: 'P30D' }] }), change: { name: 'AHU filters' } },
    { url: await post('/api/v1/webhooks', { name: 'ERP', url: 'http://127.0.0.1:9/hook', events: ['record.created'] }), change: { name: 'ERP sync' } },
  ];
}

describe('conditional GET (If-None-Match)', () => {
  it('reads If-None-Match as RFC 9110 writes it: *, lists, weak tags, commas inside tags', () => {
    assert.equal(parseEntityTags('*'), '*');
    assert.deepEqual(parseEntityTags('W/"1", "2"'), [{ weak: true, opaque: '"1"' }, { weak: false, opaque: '"2"' }]);
    assert.deepEqual(parseEntityTags(' "a,b" ,, W/"c" '), [{ weak: false, opaque: '"a,b"' }, { weak: true, opaque: '"c"' }]);
    assert.deepEqual(parseEntityTags(''), []);
    for (const invalid of ['1', '"1" x', 'w/"1"', '"1", *', '"a"b"']) assert.equal(parseEntityTags(invalid), undefined, invalid);
  });

  itOnEachDatabase('answers 304 with the ETag and no body on every resource while a tag it names is current, 200 once it changed', async ({ newTenant }) => {
    const tenant = await newTenant();
    for (const { url, change } of await oneOfEach(tenant)) {
      const first = await tenant.request({ method: 'GET', url });
      assert.equal(first.statusCode, 200, `${url}: ${first.body}`);
      const etag = String(first.headers.etag);
      assert.match(etag, /^"\d+"$/, url);
      for (const ifNoneMatch of [etag, `W/${etag}`, `"999", ${etag}`, '*']) {
        assertNotModified(await tenant.request({ method: 'GET', url, headers: { 'if-none-match': ifNoneMatch } }), etag);
      }
      // A tag that is not the current one, or a value that is no list of tags, gets the full answer.
      for (const ifNoneMatch of ['"999"', `${etag.slice(0, -1)}`, 'not-a-tag']) {
        const full = await tenant.request({ method: 'GET', url, headers: { 'if-none-match': ifNoneMatch } });
        assert.equal(full.statusCode, 200, `${url} with ${ifNoneMatch}`);
        assert.deepEqual(full.json(), first.json());
      }
      const changed = await tenant.request({ method: 'PATCH', url, payload: change as never });
      assert.equal(changed.statusCode, 200, `${url}: ${changed.body}`);
      const stale = await tenant.request({ method: 'GET', url, headers: { 'if-none-match': etag } });
      assert.equal(stale.statusCode, 200, url);
      assert.equal(stale.headers.etag, changed.headers.etag);
      assertNotModified(await tenant.request({ method: 'GET', url, headers: { 'if-none-match': String(changed.headers.etag) } }), String(changed.headers.etag));
    }
  });

  itOnEachDatabase('answers a missing resource 404 whatever If-None-Match says, and never a list 304', async ({ newTenant }) => {
    const tenant = await newTenant();
    const missing = await tenant.request({ method: 'GET', url: '/api/v1/records/rec_00000000000000000000000000', headers: { 'if-none-match': '*' } });
    assert.equal(missing.statusCode, 404);
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records', headers: { 'if-none-match': '*' } })).statusCode, 200);
  });
});
