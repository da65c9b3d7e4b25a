import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { emitEvent } from '../../src/events/outbox.js';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { itOnEachDatabase, startTestApp, waitFor } from '../helpers/test-app.js';
import { dispatchAll, readFeed } from '../helpers/event-feed.js';

describe('event feed ordering', () => {
  it('never skips an event whose transaction commits after a later one’s [postgres]', { skip: !TEST_DIALECTS.includes('postgres') }, async () => {
    const t = await startTestApp('postgres');
    // Released in `finally` too: an open transaction would keep the pool from closing.
    let release = () => {};
    try {
      const { db } = t.context.database;
      const tenant = await t.newTenant();
      const occurredAt = new Date().toISOString();
      const emit = (tx: Parameters<typeof emitEvent>[0], recordId: string) => emitEvent(tx, { orgId: tenant.orgId, type: 'record.created', payload: { recordId }, occurredAt });

      const seqOf = async (executor: typeof db | Parameters<typeof emitEvent>[0], id: string) =>
        Number((await executor.selectFrom('outbox_events').select('seq').where('id', '=', id).executeTakeFirstOrThrow()).seq);

      // The slow transaction takes its outbox seq first and commits last.
      const gate = new Promise<void>((resolve) => (release = resolve));
      let slowSeq: number | undefined;
      const slow = db.transaction().execute(async (tx) => {
        slowSeq = await seqOf(tx, await emit(tx, 'rec_slow'));
        await gate;
      });
      await waitFor(() => slowSeq !== undefined, 10_000, 'the slow transaction to write its event');
      const fastId = await db.transaction().execute((tx) => emit(tx, 'rec_fast'));
      assert.ok(slowSeq! < (await seqOf(db, fastId)), 'the slow event holds the lower seq');

      await dispatchAll(t.context);
      const first = await readFeed(tenant);
      assert.deepEqual(first.events.map((e) => e.payload.recordId), ['rec_fast']);
      const cursor = first.events[0]!.sequence;

      release();
      await slow;
      await dispatchAll(t.context);
      const next = await readFeed(tenant, `after=${cursor}`);
      assert.deepEqual(next.events.map((e) => e.payload.recordId), ['rec_slow'], 'a consumer resuming after the fast event still gets the slow one');
      assert.ok(next.events[0]!.sequence > cursor);
    } finally {
      release();
      await t.close();
    }
  });

  itOnEachDatabase('a consumer following with after while writers commit concurrently sees every event once, in order', async ({ context, newTenant }) => {
    const { db } = context.database;
    const tenant = await newTenant();
    for (const job of context.backgroundJobs) job.start();
    const WRITERS = 6;
    const EACH = 15;

    let writing = true;
    const writers = Array.from({ length: WRITERS }, async (_, writer) => {
      for (let i = 0; i < EACH; i++) {
        await db.transaction().execute(async (tx) => {
          await emitEvent(tx, { orgId: tenant.orgId, type: 'record.created', payload: { recordId: `rec_${writer}_${i}` }, occurredAt: new Date().toISOString() });
          // Holds the transaction open a little after its seq is taken, so commits interleave out of seq order.
          await delay(Math.floor(Math.random() * 4));
        });
      }
    });
    const done = Promise.all(writers).then(() => (writing = false));

    const seen: string[] = [];
    const sequences: number[] = [];
    let after = 0;
    const deadline = Date.now() + 60_000;
    while (seen.length < WRITERS * EACH) {
      assert.ok(Date.now() < deadline, `only ${seen.length} events seen`);
      const page = await readFeed(tenant, `after=${after}&limit=7&wait=${writing ? 1 : 2}`);
      for (const event of page.events) {
        seen.push(event.payload.recordId as string);
        sequences.push(event.sequence);
      }
      if (page.events.length > 0) after = page.events.at(-1)!.sequence;
    }
    await done;
    assert.equal(new Set(seen).size, WRITERS * EACH, 'no event seen twice');
    assert.ok(sequences.every((sequence, i) => i === 0 || sequence > sequences[i - 1]!), 'sequences increase');
    assert.deepEqual((await readFeed(tenant, `after=${after}`)).events, [], 'nothing left behind');
  });
});
