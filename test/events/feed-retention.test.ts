import { outboxProgressOf } from '../helpers/outbox.js';
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { purgeExpiredEvents } from '../../src/events/outbox.js';
import { TestClock, itOnEachDatabase, recordBody, seedCategory } from '../helpers/test-app.js';
import { dispatchAll, readFeed } from '../helpers/event-feed.js';

const DAY = 86_400_000;
const clock = new TestClock();

describe('event feed retention', () => {
  itOnEachDatabase(
    'keeps events for WO_EVENT_RETENTION_DAYS however soon deliveries are purged, then drops them oldest first',
    async ({ context, newTenant }) => {
      const { config } = context;
      assert.equal(config.events.retentionDays, 10);
      const { db } = context.database;
      // What the hourly retention job does.
      const runRetention = async () => {
        await context.webhooks.purgeOldDeliveries(config.webhooks.retentionDays);
        await purgeExpiredEvents(db, outboxProgressOf(context.database), clock, config.events.retentionDays);
      };
      const tenant = await newTenant();
      const categoryId = await seedCategory(tenant);
      const create = async () => (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) })).json().id as string;
      const early = [await create(), await create()];
      await dispatchAll(context);

      clock.advance(5 * DAY);
      await runRetention();
      const late = await create();
      await dispatchAll(context);
      const recordIds = async () => (await readFeed(tenant)).events.map((event) => event.payload.recordId);
      assert.deepEqual(await recordIds(), [...early, late], 'five days on, past the delivery retention, every event is still there');

      clock.advance(5 * DAY + 60_000);
      await runRetention();
      assert.deepEqual(await recordIds(), [late], 'ten days on, the first two are gone');
      clock.advance(5 * DAY);
      await runRetention();
      assert.deepEqual(await recordIds(), []);
    },
    { clock, env: { WO_EVENT_RETENTION_DAYS: '10', WO_WEBHOOK_RETENTION_DAYS: '1' } },
  );
});
