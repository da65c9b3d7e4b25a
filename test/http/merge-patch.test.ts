// PATCH under application/merge-patch+json applies RFC 7396 to `metadata` (members merged, null
// removes one); under application/json the metadata sent replaces the stored object whole.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, type TestApp, type Tenant } from '../helpers/test-app.js';

const STORED = { a: 1, nest: { x: 1, y: 2 }, list: [1, 2] };

for (const dialect of TEST_DIALECTS) {
  describe(`PATCH metadata: merge patch and replacement (${dialect})`, () => {
    let testApp: TestApp;
    let tenant: Tenant;
    let categoryId: string;
    before(async () => {
      testApp = await startTestApp(dialect);
      tenant = await testApp.newTenant();
      categoryId = await seedCategory(tenant);
    });
    after(() => testApp.close());

    const resources = [
      { kind: 'work order', create: () => ({ url: '/api/v1/records', payload: recordBody(categoryId, { metadata: STORED }) }), path: '/api/v1/records' },
      { kind: 'asset', create: () => ({ url: '/api/v1/assets', payload: { name: 'Boiler', tag: `B-${Math.random()}`, metadata: STORED } }), path: '/api/v1/assets' },
      { kind: 'location', create: () => ({ url: '/api/v1/locations', payload: { name: `Room ${Math.random()}`, metadata: STORED } }), path: '/api/v1/locations' },
    ];

    for (const resource of resources) {
      async function created(): Promise<string> {
        const response = await tenant.request({ method: 'POST', ...resource.create() });
        assert.equal(response.statusCode, 201, response.body);
        return response.json().id as string;
      }
      async function patch(id: string, contentType: string, body: object) {
        const response = await tenant.request({ method: 'PATCH', url: `${resource.path}/${id}`, headers: { 'content-type': contentType }, payload: JSON.stringify(body) });
        assert.equal(response.statusCode, 200, response.body);
        const read = await tenant.request({ method: 'GET', url: `${resource.path}/${id}` });
        assert.deepEqual(read.json().metadata, response.json().metadata, 'the answer is what was stored');
        return response.json().metadata as unknown;
      }

      it(`merges a ${resource.kind}'s metadata under merge-patch+json: members added, nested objects merged, null removes, arrays replaced`, async () => {
        const id = await created();
        assert.deepEqual(await patch(id, 'application/merge-patch+json', { metadata: { b: 2 } }), { ...STORED, b: 2 });
        assert.deepEqual(await patch(id, 'application/merge-patch+json; charset=utf-8', { metadata: { nest: { x: null, z: 3 }, list: [3], a: null } }), {
          nest: { y: 2, z: 3 },
          list: [3],
          b: 2,
        });
      });

      it(`replaces a ${resource.kind}'s metadata whole under application/json, nulls kept`, async () => {
        const id = await created();
        assert.deepEqual(await patch(id, 'application/json', { metadata: { b: 2, gone: null } }), { b: 2, gone: null });
      });

      it(`refuses a merge that would leave a ${resource.kind} more than 50 metadata keys (400), changing nothing`, async () => {
        const id = await created();
        const many = Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`k${i}`, i]));
        const response = await tenant.request({ method: 'PATCH', url: `${resource.path}/${id}`, headers: { 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ metadata: many }) });
        assert.equal(response.statusCode, 400, response.body);
        assert.equal(response.json().code, 'validation_failed');
        assert.equal(response.json().errors[0].field, 'body.metadata');
        const read = await tenant.request({ method: 'GET', url: `${resource.path}/${id}` });
        assert.deepEqual(read.json().metadata, STORED);
      });
    }
  });
}
