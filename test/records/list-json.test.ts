// GET /api/v1/records sends work orders serialized by the database (src/records/list-sqlite.ts and
// list-postgres.ts, RecordLists.listAsJson); GET /api/v1/assets/{id}/records sends the same work orders as objects through
// the response serializer. For the same rows, both must be the same bytes, whatever the text holds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, type Tenant, type TestApp } from '../helpers/test-app.js';

const CONTROL_CHARACTERS = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join('');
const AWKWARD_TEXT = `quote " backslash \\ slash / ${CONTROL_CHARACTERS} del \u007f seps \u2028\u2029 é ñ 中文 😀 </script> \ufffd`;

for (const dialect of TEST_DIALECTS) {
  describe(`record list as database-written JSON (${dialect})`, () => {
    let testApp: TestApp;
    let tenant: Tenant;
    let assetId: string;
    let categoryId: string;

    before(async () => {
      testApp = await startTestApp(dialect);
      tenant = await testApp.newTenant();
      categoryId = await seedCategory(tenant);
      const asset = await tenant.request({ method: 'POST', url: '/api/v1/assets', payload: { name: 'Boiler', tag: 'BLR-1' } });
      assert.equal(asset.statusCode, 201, asset.body);
      assetId = asset.json().id;
      const location = await tenant.request({ method: 'POST', url: '/api/v1/locations', payload: { name: 'Basement' } });
      assert.equal(location.statusCode, 201, location.body);

      const bodies = [
        recordBody(categoryId, { assetId }),
        recordBody(categoryId, {
          assetId,
          locationId: location.json().id,
          description: AWKWARD_TEXT,
          address: `${AWKWARD_TEXT} address`,
          requesterName: 'O\'Brien "the \\ tenant"',
          priority: 'URGENT',
          dueAt: '2030-01-02T03:04:05.678Z',
          externalRef: 'ERP-"1"\n',
          assignee: 'Tech 😀',
          metadata: {
            'k "\\ \t\u0001 😀': AWKWARD_TEXT,
            'line\nbreak\r\n': 'keys with line breaks are kept on both paths',
            nested: { list: [1, -0, 9007199254740991, -9007199254740991, 0.1, 123456789012345, -1.5e-7, true, false, null, 'x'], empty: {}, none: [] },
            'ünï': '😀',
          },
        }),
        recordBody(categoryId, { assetId, assignee: 'Tech', metadata: { n: 1 } }),
        recordBody(categoryId, { assetId, externalRef: 'ERP-3' }),
      ];
      for (const body of bodies) {
        const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: body });
        assert.equal(response.statusCode, 201, response.body);
      }
      // A finished work order fills the remaining nullable fields (resolution notes, completion, closing).
      const finished = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assetId, assignee: 'Tech' }) })).json();
      for (const [action, payload] of [['start', {}], ['complete', { resolutionNotes: `Fixed: ${AWKWARD_TEXT}` }], ['close', {}]] as const) {
        const response = await tenant.request({ method: 'POST', url: `/api/v1/records/${finished.id}/${action}`, payload });
        assert.equal(response.statusCode, 200, `${action}: ${response.body}`);
      }
      const cancelled = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assetId }) })).json();
      assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${cancelled.id}/cancel`, payload: { reason: 'dup' } })).statusCode, 200);
    });

    after(() => testApp.close());

    async function sameBytes(query: string): Promise<void> {
      const fromDatabase = await tenant.request({ method: 'GET', url: `/api/v1/records?${query}` });
      const fromObjects = await tenant.request({ method: 'GET', url: `/api/v1/assets/${assetId}/records?${query}` });
      assert.equal(fromDatabase.statusCode, 200, fromDatabase.body);
      assert.equal(fromObjects.statusCode, 200, fromObjects.body);
      assert.equal(fromDatabase.body, fromObjects.body, query);
      assert.equal(fromDatabase.headers['content-type'], fromObjects.headers['content-type']);
      assert.equal(fromDatabase.headers['content-length'], fromObjects.headers['content-length']);
    }

    it('writes every work order in the bytes the response serializer writes', async () => {
      const whole = await tenant.request({ method: 'GET', url: '/api/v1/records?limit=100' });
      assert.equal(whole.json().total, 6);
      assert.equal(whole.json().records[4].description, AWKWARD_TEXT);
      await sameBytes('limit=100');
    });

    it('answers GET /records/{id} in the bytes the response serializer writes for that work order', async () => {
      const fromObjects = await tenant.request({ method: 'GET', url: `/api/v1/assets/${assetId}/records?limit=100` });
      const ids = (fromObjects.json().records as { id: string }[]).map((record) => record.id);
      assert.equal(ids.length, 6);
      for (const id of ids) {
        const single = await tenant.request({ method: 'GET', url: `/api/v1/records/${id}` });
        assert.equal(single.statusCode, 200, single.body);
        assert.equal(single.json().id, id);
        // The serializer's bytes for this work order, as an element of the list's array.
        const at = fromObjects.body.indexOf(single.body);
        assert.ok(at > 0, `${id}: ${single.body} is not among the serializer's ${fromObjects.body}`);
        assert.ok('[,'.includes(fromObjects.body[at - 1]!) && '],'.includes(fromObjects.body[at + single.body.length]!), `${id}: a whole element`);
        assert.equal(single.headers['content-type'], fromObjects.headers['content-type']);
        assert.equal(single.headers.etag, `"${single.json().version}"`);
      }
    });

    it('writes the same bytes on every path: status filter, other filters, either walking end, past the end', async () => {
      for (const query of ['limit=2&offset=1', 'limit=2&offset=4', 'limit=3&status=OPEN', 'limit=1&offset=1&status=OPEN', `limit=100&categoryId=${categoryId}`, `limit=2&offset=4&categoryId=${categoryId}`, 'limit=5&offset=6', 'limit=5&status=ON_HOLD']) {
        await sameBytes(query);
      }
    });
  });
}
