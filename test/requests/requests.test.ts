// Work requests through the API: filed, listed, decided once; approval creates exactly one work order.
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { itOnEachDatabase, seedCategory, type Tenant } from '../helpers/test-app.js';
import { dispatchAll, readFeed } from '../helpers/event-feed.js';

async function fileRequest(tenant: Tenant, body: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/requests', payload: { description: 'The hallway light flickers', requesterName: 'Ann Tenant', requesterEmail: 'ann@example.com', address: 'Block B, flat 4', ...body } });
  assert.equal(response.statusCode, 201, response.body);
  return response.json();
}

describe('work requests', () => {
  itOnEachDatabase('files, gets and lists requests with their filters', async (t) => {
    const tenant = await t.newTenant();
    const first = await fileRequest(tenant);
    assert.match(first.id, /^wrq_/);
    assert.equal(first.status, 'SUBMITTED');
    assert.equal(first.channel, 'api');
    assert.equal(first.recordId, null);
    const got = await tenant.request({ method: 'GET', url: `/api/v1/requests/${first.id}` });
    assert.equal(got.statusCode, 200);
    assert.equal(got.headers.etag, '"1"');
    const second = await fileRequest(tenant, { description: 'A door sticks' });
    await tenant.request({ method: 'POST', url: `/api/v1/requests/${second.id}/cancel` });
    const submitted = (await tenant.request({ method: 'GET', url: '/api/v1/requests?status=SUBMITTED' })).json();
    assert.deepEqual(submitted.requests.map((r: { id: string }) => r.id), [first.id]);
    const all = (await tenant.request({ method: 'GET', url: '/api/v1/requests?channel=api' })).json();
    assert.equal(all.total, 2);
    const other = await t.newTenant();
    assert.equal((await other.request({ method: 'GET', url: `/api/v1/requests/${first.id}` })).json().code, 'not_found');
    const unknownCategory = await tenant.request({ method: 'POST', url: '/api/v1/requests', payload: { description: 'x', requesterName: 'y', categoryId: 'cat_00000000000000000000000000' } });
    assert.equal(unknownCategory.statusCode, 422, unknownCategory.body);
  });

  itOnEachDatabase('approves into one work order carrying requestId, then refuses every other decision', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const filed = await fileRequest(tenant, { title: 'Hallway light' });
    const approved = await tenant.request({ method: 'POST', url: `/api/v1/requests/${filed.id}/approve`, headers: { 'if-match': '"1"' }, payload: { categoryId, priority: 'HIGH' } });
    assert.equal(approved.statusCode, 200, approved.body);
    const request = approved.json();
    assert.equal(request.status, 'APPROVED');
    assert.match(request.recordId, /^rec_/);
    assert.ok(request.decidedAt);
    const record = (await tenant.request({ method: 'GET', url: `/api/v1/records/${request.recordId}` })).json();
    assert.equal(record.requestId, filed.id);
    assert.equal(record.requesterName, 'Ann Tenant');
    assert.equal(record.address, 'Block B, flat 4');
    assert.equal(record.priority, 'HIGH');
    assert.equal(record.description, 'Hallway light: The hallway light flickers');
    for (const [action, payload] of [['approve', { categoryId }], ['reject', { reason: 'no' }], ['cancel', undefined]] as const) {
      const again = await tenant.request({ method: 'POST', url: `/api/v1/requests/${filed.id}/${action}`, ...(payload ? { payload } : {}) });
      assert.equal(again.statusCode, 409, again.body);
      assert.equal(again.json().code, 'request_decided');
      assert.equal(again.headers['content-type'], 'application/problem+json; charset=utf-8');
    }
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 1);
    await dispatchAll(t.context);
    const types = (await readFeed(tenant)).events.map((e) => e.type);
    assert.ok(types.includes('request.created') && types.includes('request.approved') && types.includes('record.created'), types.join(', '));
    const approvedEvent = (await readFeed(tenant)).events.find((e) => e.type === 'request.approved')!;
    assert.equal(approvedEvent.payload.recordId, request.recordId);
  });

  itOnEachDatabase('needs a category, records:write and a fresh ETag to approve', async (t) => {
    const tenant = await t.newTenant();
    const filed = await fileRequest(tenant);
    const noCategory = await tenant.request({ method: 'POST', url: `/api/v1/requests/${filed.id}/approve`, payload: {} });
    assert.equal(noCategory.statusCode, 422, noCategory.body);
    const stale = await tenant.request({ method: 'POST', url: `/api/v1/requests/${filed.id}/approve`, headers: { 'if-match': '"7"' }, payload: { categoryId: await seedCategory(tenant) } });
    assert.equal(stale.statusCode, 412, stale.body);
    const requestsOnly = await t.newTenant(['requests:read', 'requests:write']);
    const own = await fileRequest(requestsOnly);
    const refused = await requestsOnly.request({ method: 'POST', url: `/api/v1/requests/${own.id}/approve`, payload: { categoryId: 'cat_00000000000000000000000000' } });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal((await requestsOnly.request({ method: 'GET', url: `/api/v1/requests/${own.id}` })).json().status, 'SUBMITTED');
  });

  itOnEachDatabase('rejects with the reason, and cancels', async (t) => {
    const tenant = await t.newTenant();
    const filed = await fileRequest(tenant);
    const missing = await tenant.request({ method: 'POST', url: `/api/v1/requests/${filed.id}/reject`, payload: {} });
    assert.equal(missing.statusCode, 400, missing.body);
    const rejected = (await tenant.request({ method: 'POST', url: `/api/v1/requests/${filed.id}/reject`, payload: { reason: 'The light is the landlord’s' } })).json();
    assert.equal(rejected.status, 'REJECTED');
    assert.equal(rejected.rejectionReason, 'The light is the landlord’s');
    const other = await fileRequest(tenant);
    assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/requests/${other.id}/cancel` })).json().status, 'CANCELLED');
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 0);
  });

  itOnEachDatabase('gives one work order for 10 concurrent approvals of one request', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const filed = await fileRequest(tenant);
    const answers = await Promise.all(Array.from({ length: 10 }, () => tenant.request({ method: 'POST', url: `/api/v1/requests/${filed.id}/approve`, payload: { categoryId } })));
    const statuses = answers.map((a) => (a.statusCode === 200 ? 'approved' : `${a.statusCode} ${a.json().code}`));
    assert.equal(statuses.filter((s) => s === 'approved').length, 1, statuses.join(', '));
    assert.equal(statuses.filter((s) => s === '409 request_decided').length, 9, statuses.join(', '));
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 1);
  });
});
