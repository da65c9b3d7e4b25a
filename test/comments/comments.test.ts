import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { createWorkOrder, itOnEachDatabase, type Tenant } from '../helpers/test-app.js';

const comment = (tenant: Tenant, recordId: string, body: unknown, headers: Record<string, string> = {}) =>
  tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/comments`, payload: { body }, headers });

describe('comments', () => {
  itOnEachDatabase('adds comments written by the calling key and lists them oldest first, in the history and as events too', async (t) => {
    const tenant = await t.newTenant();
    const recordId = await createWorkOrder(tenant);
    const first = await comment(tenant, recordId, 'Parts ordered, back on Tuesday.');
    assert.equal(first.statusCode, 201, first.body);
    const created = first.json();
    assert.match(created.id, /^cmt_/);
    assert.deepEqual({ ...created, id: undefined, createdAt: undefined }, {
      id: undefined,
      recordId,
      body: 'Parts ordered, back on Tuesday.',
      author: { keyId: tenant.keyId, name: 'test' },
      createdAt: undefined,
    });
    const others = [];
    for (let i = 2; i <= 4; i++) others.push((await comment(tenant, recordId, `Comment ${i}`)).json());

    const page = await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/comments?limit=2&offset=1` });
    assert.equal(page.statusCode, 200);
    assert.deepEqual(page.json(), { comments: others.slice(0, 2), total: 4, limit: 2, offset: 1 });
    const all = (await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/comments` })).json();
    assert.deepEqual(all.comments.map((c: { body: string }) => c.body), ['Parts ordered, back on Tuesday.', 'Comment 2', 'Comment 3', 'Comment 4']);

    const history = (await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/events` })).json().events;
    assert.deepEqual(history[1], {
      id: history[1].id,
      recordId,
      action: 'commented',
      fromStatus: null,
      toStatus: null,
      actor: { type: 'api_key', id: tenant.keyId },
      data: { commentId: created.id, body: created.body },
      occurredAt: created.createdAt,
    });
    const record = (await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}` })).json();
    assert.equal(record.version, 1, 'a comment does not change the work order');

    const events = await t.context.database.db.selectFrom('outbox_events').select('payload').where('org_id', '=', tenant.orgId).where('type', '=', 'record.comment_added').orderBy('seq').execute();
    assert.equal(events.length, 4);
    assert.deepEqual(JSON.parse(events[0]!.payload), { recordId, comment: created });
  });

  itOnEachDatabase('refuses blank and oversized comments, hides other organizations’ work orders, and requires the records scopes', async (t) => {
    const tenant = await t.newTenant();
    const recordId = await createWorkOrder(tenant);
    for (const body of ['', '   ', 'x'.repeat(5001), 42]) {
      const response = await comment(tenant, recordId, body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(response.json().errors[0].field, 'body.body');
    }
    const stranger = await t.newTenant();
    assert.equal((await comment(stranger, recordId, 'Hello')).statusCode, 404);
    assert.equal((await stranger.request({ method: 'GET', url: `/api/v1/records/${recordId}/comments` })).statusCode, 404);
    assert.equal((await comment(tenant, 'rec_01JD3Q4W8Y6V3C0M2ZP4K7N9XA', 'Hello')).statusCode, 404);
    const reader = await t.newTenant(['records:read']);
    assert.equal((await comment(reader, await createWorkOrder(tenant), 'Hello')).statusCode, 403);
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/comments` })).json().total, 0);
  });

  itOnEachDatabase('replays a comment retried with the same Idempotency-Key instead of adding it twice', async (t) => {
    const tenant = await t.newTenant();
    const recordId = await createWorkOrder(tenant);
    const first = await comment(tenant, recordId, 'Once', { 'idempotency-key': 'c-1' });
    const retry = await comment(tenant, recordId, 'Once', { 'idempotency-key': 'c-1' });
    assert.equal(retry.statusCode, 201);
    assert.equal(retry.headers['x-idempotent-replay'], 'true');
    assert.equal(retry.body, first.body);
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/comments` })).json().total, 1);
  });
});
