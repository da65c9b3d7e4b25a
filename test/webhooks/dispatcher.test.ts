import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { emitEvents } from '../../src/events/outbox.js';
import { outboxProgressOf } from '../helpers/outbox.js';
import { EventDispatcher } from '../../src/webhooks/dispatcher.js';
import { systemClock } from '../../src/clock.js';
import type { DeliveryWorker } from '../../src/webhooks/delivery-worker.js';
import { itOnEachDatabase, waitFor, type TestApp } from '../helpers/test-app.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * The app's own delivery worker, started alone, and a dispatcher that hands it what it writes, as
 * src/webhooks/wiring.ts wires them. The worker scans the table for due deliveries once at start and
 * then only every 60 s (WO_WEBHOOK_IDLE_POLL_MS), so whatever it sends before then was handed to it.
 */
async function workerWithHandoff({ context }: TestApp): Promise<{ worker: DeliveryWorker; dispatcher: EventDispatcher }> {
  const worker = context.backgroundJobs.find((job) => job.name === 'webhook-deliveries') as DeliveryWorker;
  const dispatcher = new EventDispatcher(context.database.db, outboxProgressOf(context.database), systemClock, undefined, undefined, worker);
  worker.start();
  // Its first scan done, it takes new deliveries (before, older ones in the table came first).
  await waitFor(() => worker.leaseForNew(new Date()) !== undefined, 10_000, 'the worker to finish its first scan');
  return { worker, dispatcher };
}

const SLOW_SCANS = { WO_WEBHOOK_IDLE_POLL_MS: '60000' };

describe('webhook dispatcher', () => {
  itOnEachDatabase('fans an event out only to the subscriptions that list its type, whatever the name holds', async ({ context, newTenant }) => {
    const { db } = context.database;
    const tenant = await newTenant();
    const quiet = await newTenant();
    // `record.status_changed` holds `_`, a LIKE wildcard: the SQL prefilter must still find it, and the
    // subscription listing only other types must still get nothing.
    const statusHook = await context.webhooks.create(tenant.orgId, { name: 'status', url: 'http://127.0.0.1:9/status', events: ['record.status_changed'] });
    const closedHook = await context.webhooks.create(tenant.orgId, { name: 'closed', url: 'http://127.0.0.1:9/closed', events: ['record.closed'] });
    // Deliveries from earlier tests' events are not this test's business: start from an empty outbox.
    const dispatcher = new EventDispatcher(db, outboxProgressOf(context.database), systemClock);
    while ((await dispatcher.dispatchBatch()).events > 0);

    const occurredAt = new Date().toISOString();
    await db.transaction().execute((tx) =>
      emitEvents(tx, [
        { orgId: tenant.orgId, type: 'record.created', payload: { recordId: 'rec_a' }, occurredAt },
        { orgId: tenant.orgId, type: 'record.status_changed', payload: { recordId: 'rec_a', from: 'OPEN', to: 'ASSIGNED' }, occurredAt },
        { orgId: quiet.orgId, type: 'record.status_changed', payload: { recordId: 'rec_b' }, occurredAt },
      ]),
    );
    assert.deepEqual(await dispatcher.dispatchBatch(), { events: 3, deliveries: 1, pending: 1, full: false });
    assert.equal(await outboxProgressOf(context.database).pendingCount(db), 0);
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

  itOnEachDatabase('polls an empty outbox with a read alone, and sees the next event at once', async ({ context, newTenant }) => {
    const { db, groupCommit } = context.database;
    const tenant = await newTenant();
    const progress = outboxProgressOf(context.database);
    const dispatcher = new EventDispatcher(db, outboxProgressOf(context.database), systemClock);
    while ((await dispatcher.dispatchBatch()).events > 0);
    assert.equal(await progress.hasPending(db), false);

    const commitsBefore = groupCommit?.commits;
    for (let i = 0; i < 5; i++) assert.deepEqual(await dispatcher.dispatchBatch(), { events: 0, deliveries: 0, pending: 0, full: false });
    // On SQLite a write transaction would have been a group commit each time.
    assert.equal(groupCommit?.commits, commitsBefore, 'idle polls committed nothing');

    await db.transaction().execute((tx) =>
      emitEvents(tx, [{ orgId: tenant.orgId, type: 'record.created', payload: { recordId: 'rec_idle' }, occurredAt: new Date().toISOString() }]),
    );
    assert.equal(await progress.hasPending(db), true);
    assert.deepEqual(await dispatcher.dispatchBatch(), { events: 1, deliveries: 0, pending: 0, full: false });
    assert.equal(await progress.hasPending(db), false);
  });

  itOnEachDatabase('splits a wide fan-out across batches without losing or repeating a delivery, past events nobody wants', async ({ context, newTenant }) => {
    const { db } = context.database;
    const tenant = await newTenant();
    const quiet = await newTenant();
    const dispatcher = new EventDispatcher(db, outboxProgressOf(context.database), systemClock);
    while ((await dispatcher.dispatchBatch()).events > 0);
    for (let i = 0; i < 5; i++) {
      await context.webhooks.create(tenant.orgId, { name: `s${i}`, url: `http://127.0.0.1:9/s${i}`, events: ['record.created'] });
    }
    const occurredAt = new Date().toISOString();
    // 500 wanted events (× 5 subscriptions = 2,500 deliveries, more than one batch may hold), each
    // followed by one nobody wants, so batches end and resume between them.
    const events = Array.from({ length: 1000 }, (_, i) => ({
      orgId: i % 2 === 0 ? tenant.orgId : quiet.orgId,
      type: 'record.created' as const,
      payload: { recordId: `rec_${i}` },
      occurredAt,
    }));
    await db.transaction().execute((tx) => emitEvents(tx, events));
    let batches = 0;
    let deliveries = 0;
    for (;;) {
      const batch = await dispatcher.dispatchBatch();
      if (batch.events === 0) break;
      batches++;
      deliveries += batch.deliveries;
      assert.ok(batch.deliveries <= 2_000, 'one batch holds at most 2,000 deliveries');
    }
    assert.ok(batches >= 2, `the fan-out took ${batches} batch(es)`);
    assert.equal(deliveries, 2_500);
    const rows = await db.selectFrom('webhook_deliveries').select(['event_id', 'subscription_id']).where('org_id', '=', tenant.orgId).execute();
    assert.equal(rows.length, 2_500);
    assert.equal(new Set(rows.map((r) => `${r.event_id}/${r.subscription_id}`)).size, 2_500, 'no delivery twice');
    assert.equal(await outboxProgressOf(context.database).pendingCount(db), 0);
  });

  itOnEachDatabase(
    'writes deliveries leased to the worker of its process, which sends them without looking for them',
    async (harness) => {
      const { db } = harness.context.database;
      const tenant = await harness.newTenant();
      const receiver = await startReceiver();
      const { worker, dispatcher } = await workerWithHandoff(harness);
      try {
        await harness.context.webhooks.create(tenant.orgId, { name: 'handed', url: receiver.url, events: ['record.created'] });
        const occurredAt = new Date().toISOString();
        await db.transaction().execute((tx) =>
          emitEvents(tx, Array.from({ length: 5 }, (_, i) => ({ orgId: tenant.orgId, type: 'record.created' as const, payload: { recordId: `rec_h${i}` }, occurredAt }))),
        );
        assert.deepEqual(await dispatcher.dispatchBatch(), { events: 5, deliveries: 5, pending: 0, full: false });
        // Within 10 s, far sooner than the worker's next scan (60 s): it was handed them.
        await waitFor(() => receiver.received.length >= 5, 10_000, 'the five deliveries');
        assert.deepEqual(receiver.received.map((r) => r.json.payload.recordId).sort(), ['rec_h0', 'rec_h1', 'rec_h2', 'rec_h3', 'rec_h4']);
        const rows = await waitFor(async () => {
          const found = await db.selectFrom('webhook_deliveries').select(['status', 'attempt_count', 'locked_until']).where('org_id', '=', tenant.orgId).execute();
          return found.every((row) => row.status === 'succeeded') && found;
        }, 10_000, 'the results to be recorded');
        assert.deepEqual(rows.map((row) => [row.status, row.attempt_count, row.locked_until]), Array(5).fill(['succeeded', 1, null]));
      } finally {
        await worker.stop();
        await receiver.close();
      }
    },
    { env: SLOW_SCANS },
  );

  itOnEachDatabase(
    'leaves what the worker has no room for in the table, leased to nobody, and those are sent once it looks',
    async (harness) => {
      const { db } = harness.context.database;
      const tenant = await harness.newTenant();
      // Never answers: the first deliveries hold the worker's slots for the whole test.
      const receiver = await startReceiver(() => 'hang');
      const { worker, dispatcher } = await workerWithHandoff(harness);
      try {
        const hook = await harness.context.webhooks.create(tenant.orgId, { name: 'full', url: receiver.url, events: ['record.created'] });
        const occurredAt = new Date().toISOString();
        await db.transaction().execute((tx) =>
          emitEvents(tx, Array.from({ length: 6 }, (_, i) => ({ orgId: tenant.orgId, type: 'record.created' as const, payload: { recordId: `rec_f${i}` }, occurredAt }))),
        );
        // One send in flight and one waiting, per subscription and in all: room for two.
        assert.deepEqual(await dispatcher.dispatchBatch(), { events: 6, deliveries: 6, pending: 4, full: false });
        const rows = await db.selectFrom('webhook_deliveries').select(['status', 'locked_until']).where('subscription_id', '=', hook.id).execute();
        assert.deepEqual(rows.map((row) => row.status).sort(), ['delivering', 'delivering', 'pending', 'pending', 'pending', 'pending']);
        for (const row of rows) assert.equal(row.locked_until === null, row.status === 'pending');
        await waitFor(() => receiver.received.length >= 1, 10_000, 'the first send');
        receiver.answer = () => ({ status: 200 });
        // What the dispatcher's wiring does when it leaves deliveries pending.
        worker.wake();
        const distinct = () => new Set(receiver.received.map((r) => r.json.payload.recordId)).size;
        await waitFor(() => distinct() === 6, 20_000, 'each of the six events once the receiver answers');
      } finally {
        await worker.stop();
        await receiver.close();
      }
    },
    { env: { ...SLOW_SCANS, WO_WEBHOOK_CONCURRENCY: '1', WO_WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: '1', WO_WEBHOOK_TIMEOUT_MS: '1000' } },
  );
});
