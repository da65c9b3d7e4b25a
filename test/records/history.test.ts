// A work order's history at GET /records/{id}/history, in the shape its completion proof signs, and
// the first shape at GET /records/{id}/events, served unchanged while it is deprecated.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { itOnEachDatabase, recordBody, seedCategory, startTestApp, type Tenant } from '../helpers/test-app.js';

const SUNSET = 'Wed, 30 Jun 2027 23:59:59 GMT';
const DEPRECATED_SINCE = `@${Date.UTC(2026, 11, 2) / 1000}`;

/** A work order assigned, started and completed: four history entries. */
async function completedWorkOrder(tenant: Tenant): Promise<string> {
  const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(await seedCategory(tenant)) });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id as string;
  for (const [action, payload] of [['assign', { assignee: 'Bob Plumber' }], ['start', {}], ['complete', { resolutionNotes: 'Replaced the washer' }]] as const) {
    const answer = await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/${action}`, payload });
    assert.equal(answer.statusCode, 200, answer.body);
  }
  return id;
}

/** The link-values of a `Link` field, by relation. */
function linksOf(response: LightMyRequestResponse): Record<string, string> {
  const field = String(response.headers.link ?? '');
  return Object.fromEntries([...field.matchAll(/<([^>]*)>; rel="([^"]+)"/g)].map((match) => [match[2]!, match[1]!]));
}

describe('a work order’s history', () => {
  itOnEachDatabase('answers the history under `history`, oldest first, each entry as the completion proof states it', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    const id = await completedWorkOrder(tenant);
    const answer = await tenant.request({ method: 'GET', url: `/api/v1/records/${id}/history` });
    assert.equal(answer.statusCode, 200, answer.body);
    const page = answer.json();
    assert.deepEqual(Object.keys(page), ['history', 'total', 'limit', 'offset']);
    assert.deepEqual([page.total, page.limit, page.offset], [4, 50, 0]);
    assert.deepEqual(
      page.history.map((entry: Record<string, unknown>) => [entry.action, entry.from, entry.to, entry.actor]),
      [
        ['created', null, 'OPEN', `api_key:${tenant.keyId}`],
        ['assign', 'OPEN', 'ASSIGNED', `api_key:${tenant.keyId}`],
        ['start', 'ASSIGNED', 'IN_PROGRESS', `api_key:${tenant.keyId}`],
        ['complete', 'IN_PROGRESS', 'COMPLETED', `api_key:${tenant.keyId}`],
      ],
    );
    for (const entry of page.history) assert.deepEqual(Object.keys(entry), ['action', 'from', 'to', 'actor', 'at', 'data']);
    assert.deepEqual(page.history[1].data, { assignee: 'Bob Plumber', previousAssignee: null });
    assert.equal(answer.headers.deprecation, undefined);

    // The signed statement's history is the same list, entry for entry.
    await context.proofs.log.sealPending();
    const bundle = await tenant.request({ method: 'GET', url: `/api/v1/records/${id}/proof` });
    assert.equal(bundle.statusCode, 200, bundle.body);
    const statement = JSON.parse(Buffer.from((bundle.json().jws as string).split('.')[1]!, 'base64url').toString('utf8'));
    assert.deepEqual(statement.history, page.history);
  });

  itOnEachDatabase('pages the history with limit and offset, with an exact total and the pages’ links', async ({ newTenant }) => {
    const tenant = await newTenant();
    const id = await completedWorkOrder(tenant);
    const second = await tenant.request({ method: 'GET', url: `/api/v1/records/${id}/history?limit=2&offset=2` });
    assert.equal(second.statusCode, 200, second.body);
    assert.deepEqual(second.json().history.map((entry: { action: string }) => entry.action), ['start', 'complete']);
    assert.equal(second.json().total, 4);
    assert.deepEqual(linksOf(second), {
      first: `/api/v1/records/${id}/history?limit=2&offset=0`,
      prev: `/api/v1/records/${id}/history?limit=2&offset=0`,
      last: `/api/v1/records/${id}/history?limit=2&offset=2`,
    });
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records/rec_00000000000000000000000000/history' })).statusCode, 404);
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${id}/history?limit=0` })).statusCode, 400);
    const stranger = await newTenant();
    assert.equal((await stranger.request({ method: 'GET', url: `/api/v1/records/${id}/history` })).statusCode, 404);
  });

  itOnEachDatabase('keeps serving the first shape at /events, each answer announcing its deprecation, sunset and successor', async ({ newTenant }) => {
    const tenant = await newTenant();
    const id = await completedWorkOrder(tenant);
    const answer = await tenant.request({ method: 'GET', url: `/api/v1/records/${id}/events?limit=3` });
    assert.equal(answer.statusCode, 200, answer.body);
    const page = answer.json();
    assert.deepEqual(Object.keys(page), ['events', 'total', 'limit', 'offset']);
    assert.equal(page.total, 4);
    assert.deepEqual(Object.keys(page.events[0]), ['id', 'recordId', 'action', 'fromStatus', 'toStatus', 'actor', 'data', 'occurredAt']);
    assert.match(page.events[0].id, /^rev_/);
    assert.deepEqual(page.events[1].actor, { type: 'api_key', id: tenant.keyId });
    assert.deepEqual([page.events[1].fromStatus, page.events[1].toStatus], ['OPEN', 'ASSIGNED']);

    assert.equal(answer.headers.deprecation, DEPRECATED_SINCE);
    assert.equal(answer.headers.sunset, SUNSET);
    assert.equal(new Date(String(answer.headers.sunset)).toISOString(), '2027-06-30T23:59:59.000Z');
    assert.deepEqual(linksOf(answer), {
      first: `/api/v1/records/${id}/events?limit=3&offset=0`,
      next: `/api/v1/records/${id}/events?limit=3&offset=3`,
      last: `/api/v1/records/${id}/events?limit=3&offset=3`,
      deprecation: '/docs#/Work%20orders/listRecordEvents',
      sunset: '/docs#/Work%20orders/listRecordEvents',
      'successor-version': `/api/v1/records/${id}/history?limit=3`,
    });

    // Problems too say so.
    const missing = await tenant.request({ method: 'GET', url: '/api/v1/records/rec_00000000000000000000000000/events' });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers.deprecation, DEPRECATED_SINCE);
    assert.equal(missing.headers.sunset, SUNSET);
    assert.equal(linksOf(missing)['successor-version'], '/api/v1/records/rec_00000000000000000000000000/history');

    // Entry for entry, the same history in both shapes.
    const history = (await tenant.request({ method: 'GET', url: `/api/v1/records/${id}/history` })).json().history;
    const events = (await tenant.request({ method: 'GET', url: `/api/v1/records/${id}/events` })).json().events;
    assert.deepEqual(
      events.map((e: { action: string; fromStatus: string | null; toStatus: string | null; actor: { type: string; id: string }; occurredAt: string; data: unknown }) => ({
        action: e.action,
        from: e.fromStatus,
        to: e.toStatus,
        actor: `${e.actor.type}:${e.actor.id}`,
        at: e.occurredAt,
        data: e.data,
      })),
      history,
    );
  });

  it('documents /events as deprecated, with its headers, and /history as its successor', async () => {
    const t = await startTestApp('sqlite');
    try {
      const document = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
      const old = document.paths['/api/v1/records/{id}/events'].get;
      const current = document.paths['/api/v1/records/{id}/history'].get;
      assert.equal(old.deprecated, true);
      assert.equal(current.deprecated, undefined);
      assert.equal(current.operationId, 'listRecordHistory');
      assert.match(old.description, /GET \/records\/\{id\}\/history/);
      for (const header of ['deprecation', 'sunset', 'link']) assert.ok(old.responses['200'].headers[header], header);
      // Its problem answers are the shared ones; the description says they carry the headers too.
      assert.equal(old.responses['404'].$ref, '#/components/responses/NotFound');
      assert.match(old.description, /Deprecation/);
      assert.equal(current.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/RecordHistoryList');
      assert.equal(document.components.schemas.RecordHistoryList.properties.history.items.$ref, '#/components/schemas/HistoryEntry');
    } finally {
      await t.close();
    }
  });
});
