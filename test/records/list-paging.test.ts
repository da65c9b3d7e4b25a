// Paging through GET /api/v1/records at every offset, including the older half of the list, which
// the repository may read walking up from the oldest entry (src/records/list-repository.ts, pageWalk),
// and past its end; with no filter, the status filter (maintained totals) and another (COUNT).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, type TestApp, type Tenant } from '../helpers/test-app.js';

for (const dialect of TEST_DIALECTS) {
  describe(`record list paging (${dialect})`, () => {
    let testApp: TestApp;
    let tenant: Tenant;
    const statuses = ['OPEN', 'ASSIGNED', 'OPEN', 'OPEN', 'ASSIGNED', 'OPEN', 'OPEN'];

    before(async () => {
      testApp = await startTestApp(dialect);
      tenant = await testApp.newTenant();
      const categoryId = await seedCategory(tenant);
      for (const [i, status] of statuses.entries()) {
        const body = recordBody(categoryId, { description: `job ${i}`, ...(status === 'ASSIGNED' ? { assignee: 'Tech' } : {}) });
        const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: body });
        assert.equal(response.statusCode, 201);
      }
    });

    after(() => testApp.close());

    async function pageIds(query: string): Promise<{ ids: string[]; total: number }> {
      const response = await tenant.request({ method: 'GET', url: `/api/v1/records?${query}` });
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json() as { records: { id: string }[]; total: number };
      return { ids: body.records.map((r) => r.id), total: body.total };
    }

    it('answers every page, from either end of the list, as the matching slice of the whole list newest first', async () => {
      for (const filter of ['', '&status=OPEN', '&assignee=Tech']) {
        const whole = await pageIds(`limit=100${filter}`);
        assert.equal(whole.ids.length, whole.total);
        for (let limit = 1; limit <= 4; limit++) {
          for (let offset = 0; offset <= whole.total + 1; offset++) {
            const page = await pageIds(`limit=${limit}&offset=${offset}${filter}`);
            assert.deepEqual(page.ids, whole.ids.slice(offset, offset + limit), `limit ${limit}, offset ${offset}${filter}`);
            assert.equal(page.total, whole.total);
          }
        }
      }
    });

    it('answers an empty page with the exact total for an offset far past the end', async () => {
      const page = await pageIds('limit=50&offset=2147483647');
      assert.deepEqual(page.ids, []);
      assert.equal(page.total, statuses.length);
    });
  });
}
