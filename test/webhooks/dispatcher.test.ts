import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { emitEvents } from '../../src/events/outbox.js';
import { outboxProgress } from '../../src/events/outbox-progress.js';
import { EventDispatcher } from '../../src/webhooks/dispatcher.js';
import { systemClock } from '../../src/clock.js';
import { itOnEachDatabase } from '../helpers/test-app.js';

describe('webhook dispatcher', () => {
  itOnEachDatabase('fans an event out only to the subscriptions that list its type, whatever the name holds', async ({ context, newTenant }) => {
    const { db, dialect } = context.database;
    const tenant = await newTenant();
    const quiet = await newTenant();
    // `record.status_changed` holds `_`, a LIKE wildcard: the SQL prefilter must still find it, and the
    // subscription listing only other types must still get nothing.
    const statusHook = await context.webhooks.create(tenant.orgId, { name: 'status', url: 'http://127.0.0.1:9/status', events: ['record.status_changed'] });
    const closedHook = await context.webhooks.create(tenant.orgId, { name: 'closed', url: 'http://127.0.0.1:9/closed', events: ['record.closed'] });
    // Deliveries from earlier tests' events are not this test's business: start from an empty outbox.
    const dispatcher = new EventDispatcher(db, dialect, systemClock);
    while ((await dispatcher.dispatchBatch()).events > 0);

    const occurredAt = new Date().toISOString();
    await db.transaction().execute((tx) =>
      emitEvents(tx, [
        { orgId: tenant.orgId, type: 'record.created', payload: { recordId: 'rec_a' }, occurredAt },
        { orgId: tenant.orgId, type: 'record.status_changed', payload: { recordId: 'rec_a', from: 'OPEN', to: 'ASSIGNED' }, occurredAt },
        { orgId: quiet.orgId, type: 'record.status_changed', payload: { recordId: 'rec_b' }, occurredAt },
      ]),
    );
    assert.deepEqual(await dispatcher.dispatchBatch(), { events: 3, deliveries: 1, full: false });
    assert.equal(await outboxProgress(dialect).pendingCount(db), 0);
    const rows = await db.selectFrom('webhook_deliveries').selectAll().where('org_id', '=', tenant.orgId).execute();
    assert.deepEqual(
      rows.map((r) => [r.subscription_id, r.event_type]),
      [[statusHook.id, 'record.status_changed']],
    );
    const body = JSON.parse(rows[0]!.body) as { event: string; payload: { recordId: string; to: string } };
    assert.equal(body.event, 'record.status_changed');
    assert.equal(body.payload.to, 'ASSIGNED');
    assert.notEqual(closedHook.id, statusHook.id);
  });
});
