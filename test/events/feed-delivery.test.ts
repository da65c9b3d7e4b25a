import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { EVENT_TYPES } from '../../src/features.js';
import { itOnEachDatabase, recordBody, seedCategory, waitFor } from '../helpers/test-app.js';
import { readFeed } from '../helpers/event-feed.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

describe('event feed and webhooks', () => {
  itOnEachDatabase('each event’s payload, id, type and time are those its webhook delivery carried to a real receiver', async ({ context, newTenant }) => {
    const receiver = await startReceiver();
    try {
      const tenant = await newTenant();
      const created = await tenant.request({ method: 'POST', url: '/api/v1/webhooks', payload: { name: 'all', url: receiver.url, events: EVENT_TYPES } });
      assert.equal(created.statusCode, 201, created.body);
      for (const job of context.backgroundJobs) job.start();

      // Work orders through their lifecycle, and every deletable resource deleted.
      const categoryId = await seedCategory(tenant);
      const recordId = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignee: 'Kim' }) })).json().id;
      for (const [action, body] of [['start', {}], ['complete', { resolutionNotes: 'Washer replaced' }], ['close', {}]] as const) {
        const response = await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/${action}`, payload: body });
        assert.equal(response.statusCode, 200, `${action}: ${response.body}`);
      }
      const asset = (await tenant.request({ method: 'POST', url: '/api/v1/assets', payload: { name: 'Pump', tag: 'P-7' } })).json();
      assert.equal((await tenant.request({ method: 'PATCH', url: `/api/v1/assets/${asset.id}`, payload: { name: 'Pump 7' } })).statusCode, 200);
      assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/assets/${asset.id}` })).statusCode, 204);
      const location = (await tenant.request({ method: 'POST', url: '/api/v1/locations', payload: { name: 'Annex' } })).json();
      assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/locations/${location.id}` })).statusCode, 204);
      const spare = await seedCategory(tenant, 'Unused');
      assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/categories/${spare}` })).statusCode, 204);

      const expected = [
        'record.created',
        'record.assigned',
        'record.status_changed',
        'record.completed',
        'record.closed',
        'record.proof_delivered',
        'asset.created',
        'asset.updated',
        'asset.deleted',
        'location.deleted',
        'category.deleted',
      ];
      // Deliveries are written in the transaction that puts the events in the feed: wait for them to arrive.
      const feed = await waitFor(
        async () => {
          const page = await readFeed(tenant, 'limit=100');
          const types = new Set(page.events.map((event) => event.type));
          const arrived = new Set(receiver.received.map((delivery) => delivery.headers['x-webhook-id']));
          return expected.every((type) => types.has(type)) && page.events.every((event) => arrived.has(event.id)) ? page : undefined;
        },
        30_000,
        'a delivery of every event in the feed',
      );
      const received = receiver.received;
      assert.equal(new Set(received.map((delivery) => delivery.headers['x-webhook-id'])).size, feed.events.length, 'one delivery per event (one subscription)');
      const byId = new Map(feed.events.map((event) => [event.id, event]));
      for (const delivery of received) {
        const event = byId.get(delivery.headers['x-webhook-id'] as string);
        assert.ok(event, `the feed holds the event of delivery ${delivery.headers['x-webhook-id']}`);
        assert.equal(event.type, delivery.json.event);
        assert.equal(event.occurredAt, delivery.json.timestamp);
        assert.equal(event.sequence, delivery.json.payload.sequence);
        // Same values and same key order: the bytes a receiver parsed.
        assert.equal(JSON.stringify(event.payload), JSON.stringify(delivery.json.payload), event.type);
      }
      const deleted = Object.fromEntries(feed.events.filter((event) => event.type.endsWith('.deleted')).map((event) => [event.type, event.payload]));
      assert.equal(deleted['asset.deleted']!.assetId, asset.id);
      assert.equal(deleted['location.deleted']!.locationId, location.id);
      assert.deepEqual((deleted['location.deleted']!.location as { name: string }).name, 'Annex');
      assert.equal(deleted['category.deleted']!.categoryId, spare);
      assert.equal((deleted['category.deleted']!.category as { name: string }).name, 'Unused');
    } finally {
      await receiver.close();
    }
  });
});
