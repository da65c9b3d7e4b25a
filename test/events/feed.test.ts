import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { itOnEachDatabase, recordBody, seedCategory, waitFor, type Tenant } from '../helpers/test-app.js';
import { dispatchAll, readFeed, waitingFeedRequests } from '../helpers/event-feed.js';

async function createRecord(tenant: Tenant, categoryId: string): Promise<string> {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) });
  assert.equal(response.statusCode, 201, response.body);
  return response.json().id as string;
}

describe('event feed', () => {
  itOnEachDatabase('lists the organization’s dispatched events oldest first in the list envelope', async ({ context, newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const recordId = await createRecord(tenant, categoryId);
    const asset = await tenant.request({ method: 'POST', url: '/api/v1/assets', payload: { name: 'Boiler', tag: 'B-1' } });
    assert.deepEqual(await readFeed(tenant), { events: [], total: 0, limit: 50, offset: 0 }, 'nothing is in the feed before it is dispatched');

    await dispatchAll(context);
    const page = await readFeed(tenant);
    assert.deepEqual(Object.keys(page), ['events', 'total', 'limit', 'offset']);
    assert.deepEqual(
      page.events.map((event) => event.type),
      ['record.created', 'asset.created'],
    );
    assert.equal(page.total, 2);
    const [created, assetCreated] = page.events;
    assert.deepEqual(Object.keys(created!), ['id', 'type', 'sequence', 'occurredAt', 'payload']);
    assert.match(created!.id, /^evt_/);
    assert.ok(created!.sequence < assetCreated!.sequence, 'increasing sequence');
    assert.match(created!.occurredAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(created!.payload.recordId, recordId);
    assert.equal(created!.payload.sequence, created!.sequence, 'the payload carries the sequence, as webhooks do');
    assert.equal(assetCreated!.payload.assetId, asset.json().id);
  });

  itOnEachDatabase('filters by a comma list of event names and refuses names outside the catalogue', async ({ context, newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const recordId = await createRecord(tenant, categoryId);
    assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/assign`, payload: { assignee: 'Kim' } })).statusCode, 200);
    const location = await tenant.request({ method: 'POST', url: '/api/v1/locations', payload: { name: 'Depot' } });
    assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/locations/${location.json().id}` })).statusCode, 204);
    await dispatchAll(context);

    const all = await readFeed(tenant);
    assert.deepEqual(all.events.map((e) => e.type), ['record.created', 'record.assigned', 'record.status_changed', 'location.deleted']);
    const some = await readFeed(tenant, 'type=record.status_changed,%20location.deleted');
    assert.deepEqual(some.events.map((e) => e.type), ['record.status_changed', 'location.deleted']);
    assert.equal(some.total, 2);
    assert.deepEqual((await readFeed(tenant, 'type=asset.deleted')).events, []);

    for (const [query, field] of [
      ['type=record.created,record.exploded', 'querystring.type'],
      ['type=record.created,', 'querystring.type'],
      ['type=', 'querystring.type'],
      ['after=-1', 'querystring.after'],
      ['after=0x10', 'querystring.after'],
      ['after=1e3', 'querystring.after'],
      ['wait=0', 'querystring.wait'],
      ['wait=31', 'querystring.wait'],
      ['wait=2.5', 'querystring.wait'],
      ['limit=101', 'querystring.limit'],
      ['since=1', 'querystring.since'],
    ] as const) {
      const response = await tenant.request({ method: 'GET', url: `/api/v1/events?${query}` });
      assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/, query);
      assert.equal(response.json().code, 'validation_failed', query);
      assert.ok(
        (response.json().errors as { field: string }[]).some((error) => error.field === field || error.field === 'querystring'),
        `${query}: ${response.body}`,
      );
    }
    const unknown = await tenant.request({ method: 'GET', url: '/api/v1/events?type=record.exploded' });
    assert.match(unknown.json().errors[0].message, /known events: record\.created/);
  });

  itOnEachDatabase('pages with limit and offset, and after returns only later events; total counts what matches', async ({ context, newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    for (let i = 0; i < 5; i++) await createRecord(tenant, categoryId);
    await dispatchAll(context);

    const all = await readFeed(tenant);
    assert.equal(all.total, 5);
    const sequences = all.events.map((e) => e.sequence);
    const page = await readFeed(tenant, 'limit=2&offset=2');
    assert.deepEqual(page.events.map((e) => e.sequence), sequences.slice(2, 4));
    assert.deepEqual([page.total, page.limit, page.offset], [5, 2, 2]);

    const later = await readFeed(tenant, `after=${sequences[1]}&limit=2`);
    assert.deepEqual(later.events.map((e) => e.sequence), sequences.slice(2, 4));
    assert.equal(later.total, 3, 'total counts the events after `after`');
    assert.deepEqual(await readFeed(tenant, `after=${sequences[4]}`), { events: [], total: 0, limit: 50, offset: 0 });

    // Following page by page with `after` sees each event once.
    const seen: number[] = [];
    for (let after = 0; ; ) {
      const next = await readFeed(tenant, `after=${after}&limit=2`);
      if (next.events.length === 0) break;
      seen.push(...next.events.map((e) => e.sequence));
      after = next.events.at(-1)!.sequence;
    }
    assert.deepEqual(seen, sequences);
  });

  itOnEachDatabase('requires the events:read scope and never shows another organization’s events', async ({ context, newTenant }) => {
    const owner = await newTenant();
    const neighbour = await newTenant(['events:read', 'records:write', 'categories:write']);
    const categoryId = await seedCategory(owner);
    await createRecord(owner, categoryId);
    await createRecord(neighbour, await seedCategory(neighbour));
    await dispatchAll(context);

    const withoutScope = await newTenant(['records:read', 'records:write']);
    const refused = await withoutScope.request({ method: 'GET', url: '/api/v1/events' });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().code, 'insufficient_scope');
    assert.equal(refused.json().requiredScope, 'events:read');

    const mine = await readFeed(owner);
    const theirs = await readFeed(neighbour);
    assert.deepEqual(mine.events.map((e) => e.type), ['record.created']);
    assert.equal(theirs.total, 1);
    const theirIds = new Set(theirs.events.map((e) => e.id));
    assert.ok(mine.events.every((e) => !theirIds.has(e.id)));
    assert.ok(mine.events.every((e) => e.payload.record && (e.payload.record as { id: string }).id.startsWith('rec_')));
  });

  itOnEachDatabase('a long-poll is woken by the commit of a matching event and answers well before its wait ends', async ({ context, newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    for (const job of context.backgroundJobs) job.start();

    const started = Date.now();
    const answer = tenant.request({ method: 'GET', url: '/api/v1/events?type=record.created&wait=20' });
    await waitFor(async () => (await waitingFeedRequests(context)) === 1, 10_000, 'the long-poll to wait');
    const recordId = await createRecord(tenant, categoryId);
    const createdAt = Date.now();
    const response = await answer;
    const answeredAt = Date.now();
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(
      response.json().events.map((e: { payload: { recordId: string } }) => e.payload.recordId),
      [recordId],
    );
    // A wake, not the end of the wait (20 s) nor a fallback look (5 s on SQLite, none on PostgreSQL).
    assert.ok(answeredAt - createdAt < 4_000, `answered ${answeredAt - createdAt} ms after the create`);
    assert.ok(answeredAt - started < 15_000);
    assert.equal(await waitingFeedRequests(context), 0);
  });

  itOnEachDatabase('a long-poll with nothing to show answers an empty page when its wait ends', async ({ newTenant }) => {
    const tenant = await newTenant();
    const started = Date.now();
    const page = await readFeed(tenant, 'wait=1');
    const elapsed = Date.now() - started;
    assert.deepEqual(page, { events: [], total: 0, limit: 50, offset: 0 });
    assert.ok(elapsed >= 950 && elapsed < 5_000, `answered after ${elapsed} ms`);
  });

  itOnEachDatabase('a long-poll with events already there answers at once', async ({ context, newTenant }) => {
    const tenant = await newTenant();
    await createRecord(tenant, await seedCategory(tenant));
    await dispatchAll(context);
    const started = Date.now();
    const page = await readFeed(tenant, 'wait=30');
    assert.equal(page.events.length, 1);
    assert.ok(Date.now() - started < 5_000);
  });

  itOnEachDatabase('shutting down answers a waiting long-poll at once rather than holding the shutdown', async ({ app, context, newTenant }) => {
    const tenant = await newTenant();
    const answer = tenant.request({ method: 'GET', url: '/api/v1/events?wait=30' });
    await waitFor(async () => (await waitingFeedRequests(context)) === 1, 10_000, 'the long-poll to wait');
    const started = Date.now();
    await app.close();
    const response = await answer;
    assert.ok(Date.now() - started < 5_000, `shutdown took ${Date.now() - started} ms`);
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json().events, []);
  });
});
