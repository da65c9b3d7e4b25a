import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { itOnEachDatabase, recordBody, seedCategory } from '../helpers/test-app.js';

describe('checklists and access links', () => {
  itOnEachDatabase('holds the completion gate for a job page’s holder: the page answers 409 until the required items are answered', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const create = async (url: string, payload: unknown) => {
      const response = await tenant.request({ method: 'POST', url, payload: payload as never });
      assert.equal(response.statusCode, 201, response.body);
      return response.json() as { id: string } & Record<string, string>;
    };
    const checklist = await create('/api/v1/checklists', { name: 'Sign-off', items: [{ key: 'tested', label: 'Tested', type: 'pass_fail', required: true }] });
    const acme = await create('/api/v1/vendors', { name: 'Acme Plumbing', trades: ['Plumbing'] });
    const leak = await create('/api/v1/records', recordBody(categoryId, { description: 'Leak', assignees: [{ type: 'vendor', id: acme.id }], checklistIds: [checklist.id] }));
    const link = await create(`/api/v1/records/${leak.id}/access-links`, { vendorId: acme.id });
    const path = new URL(link.url!).pathname;
    const form = (suffix: string, fields: Record<string, string>) =>
      t.app.inject({ method: 'POST', url: `${path}${suffix}`, payload: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });

    assert.equal((await form('/start', {})).statusCode, 303);
    const refused = await form('/complete', { resolutionNotes: 'Fixed' });
    assert.equal(refused.statusCode, 409, refused.body);
    assert.match(refused.body, /tested/);
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${leak.id}` })).json().status, 'IN_PROGRESS');

    const answered = await tenant.request({ method: 'PUT', url: `/api/v1/records/${leak.id}/checklists/${checklist.id}/items/tested`, payload: { value: 'pass' } });
    assert.equal(answered.statusCode, 200, answered.body);
    assert.equal((await form('/complete', { resolutionNotes: 'Fixed' })).statusCode, 303);
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${leak.id}` })).json().status, 'COMPLETED');
  });
});
