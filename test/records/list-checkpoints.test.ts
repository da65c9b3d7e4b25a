// Deep pages of the whole work-order list, and of a status-filtered one, are read from remembered
// positions (src/records/list-checkpoints.ts). Every page must still be the exact slice of its list,
// newest first, whatever happened since the positions were taken: new work orders, work orders
// created with an older timestamp (a clock that went back), ties on the timestamp, status changes
// (which move entries in and out of the middle of a status's list) — and while writes run
// concurrently with the reads.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Executor } from '../../src/db/database.js';
import { ListCheckpoints } from '../../src/records/list-checkpoints.js';
import type { RecordStatus } from '../../src/records/schemas.js';
import { RowAppends } from '../../src/db/row-appends.js';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { recordsOnDatabase, workOrderRow } from '../helpers/records.js';
import { seedCategory, startTestApp, waitFor, type Tenant, type TestApp } from '../helpers/test-app.js';

const STATUSES = ['OPEN', 'ASSIGNED', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED'];

/** A deterministic pseudo-random sequence, so a failure can be replayed. */
function randomSequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

for (const dialect of TEST_DIALECTS) {
  describe(`record list from checkpoints (${dialect})`, () => {
    let testApp: TestApp;
    let db: Executor;
    let records: ReturnType<typeof recordsOnDatabase>;
    let tenant: Tenant;
    let categoryId: string;
    let serial = 0;
    /** The oldest IN_PROGRESS work orders (2019), oldest first: written by one test, read by the next. */
    const block2019: string[] = [];

    before(async () => {
      testApp = await startTestApp(dialect);
      db = testApp.context.database.db;
      records = recordsOnDatabase(testApp.context.database);
      tenant = await testApp.newTenant();
      categoryId = await seedCategory(tenant);
    });

    after(() => testApp.close());

    /** Writes a work order straight into storage at the given instant, counters included, as a create does. */
    async function insertAt(createdAt: string, status: string): Promise<string> {
      const id = `rec_${String(++serial).padStart(26, '0')}`;
      const row = workOrderRow({ id, orgId: tenant.orgId, categoryId, status, createdAt });
      await testApp.context.database.db.transaction().execute(async (tx) => {
        await new RowAppends().add('records', row).write(tx);
        await records.counts.countCreated(tx, tenant.orgId, status);
      });
      return id;
    }

    async function changeStatus(id: string, to: string): Promise<void> {
      await testApp.context.database.db.transaction().execute(async (tx) => {
        const { status } = await tx.selectFrom('records').select('status').where('id', '=', id).executeTakeFirstOrThrow();
        if (status === to) return;
        await tx.updateTable('records').set({ status: to }).where('id', '=', id).execute();
        await records.counts.countMoved(tx, tenant.orgId, status, to);
      });
    }

    /** The list as a plain ORDER BY reads it: every work order, or those in `status`. */
    async function wholeList(status?: string): Promise<string[]> {
      let query = db.selectFrom('records').select('id').where('org_id', '=', tenant.orgId);
      if (status) query = query.where('status', '=', status);
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
      return rows.map((row) => row.id);
    }

    async function pageIds(checkpoints: ListCheckpoints, limit: number, offset: number, status?: string): Promise<{ ids: string[]; total: number }> {
      const { recordsJson, total } = await records.lists.listAsJson(db, tenant.orgId, status ? { status: status as RecordStatus } : {}, { limit, offset }, checkpoints);
      return { ids: (JSON.parse(`[${recordsJson}]`) as { id: string }[]).map((record) => record.id), total };
    }

    async function assertEveryPage(checkpoints: ListCheckpoints, limits: number[], label: string, status?: string): Promise<void> {
      const whole = await wholeList(status);
      for (const limit of limits) {
        for (let offset = 0; offset <= whole.length + 1; offset++) {
          const page = await pageIds(checkpoints, limit, offset, status);
          assert.equal(page.total, whole.length, `${label}${status ? ` (${status})` : ''}: total, limit ${limit}, offset ${offset}`);
          assert.deepEqual(page.ids, whole.slice(offset, offset + limit), `${label}${status ? ` (${status})` : ''}: limit ${limit}, offset ${offset}`);
        }
      }
    }

    it('answers every page as the slice of the whole list through inserts (some older than the checkpoints), timestamp ties and status changes', async () => {
      const random = randomSequence(dialect === 'sqlite' ? 7 : 11);
      const base = Date.parse('2026-01-01T00:00:00.000Z');
      const instant = (ms: number) => new Date(base + ms).toISOString();
      // Half of them OPEN, so that list is long enough for deep pages of its own.
      for (let i = 0; i < 150; i++) await insertAt(instant(i * 1000), i % 2 === 0 ? 'OPEN' : STATUSES[(i >> 1) % STATUSES.length]!);

      const checkpoints = new ListCheckpoints(4);
      await assertEveryPage(checkpoints, [1, 3, 7], 'initial');
      assert.ok((checkpoints.cachedFor({ orgId: tenant.orgId })?.length ?? 0) > 10, 'deep pages were read from checkpoints');
      for (const status of ['OPEN', 'ASSIGNED']) await assertEveryPage(checkpoints, [1, 3, 7], 'initial', status);
      assert.ok((checkpoints.cachedFor({ orgId: tenant.orgId, status: 'OPEN' })?.length ?? 0) >= 5, 'deep OPEN pages were read from checkpoints');

      for (let round = 0; round < 4; round++) {
        for (let i = 0; i < 12; i++) {
          const roll = random();
          if (roll < 0.4) {
            await insertAt(instant(200_000 + round * 20_000 + i * 1000), 'OPEN'); // newer than everything
          } else if (roll < 0.6) {
            await insertAt(instant(Math.floor(random() * 150) * 1000 + 1), 'OPEN'); // a clock that went back
          } else if (roll < 0.75) {
            await insertAt(instant(Math.floor(random() * 150) * 1000), 'ASSIGNED'); // same instant as another: the id breaks the tie
          } else {
            const ids = await wholeList();
            await changeStatus(ids[Math.floor(random() * ids.length)]!, STATUSES[Math.floor(random() * STATUSES.length)]!);
          }
        }
        await assertEveryPage(checkpoints, [2, 5], `round ${round}`);
        for (const status of ['OPEN', 'ASSIGNED', 'COMPLETED']) await assertEveryPage(checkpoints, [2, 5], `round ${round}`, status);
      }
    });

    it('reads each page and its total from one snapshot while work orders are being created', async () => {
      const checkpoints = new ListCheckpoints(4);
      const before = await wholeList();
      await pageIds(checkpoints, 5, before.length - 30);
      assert.equal(checkpoints.fullWalks, 1);
      const start = Date.parse('2027-01-01T00:00:00.000Z');
      const creating = (async () => {
        for (let i = 0; i < 60; i++) await insertAt(new Date(start + i * 1000).toISOString(), 'OPEN');
      })();
      const answers: { offset: number; ids: string[]; total: number }[] = [];
      const reader = async (first: number) => {
        for (let i = first; i < first + 40; i++) {
          const offset = before.length - 40 + (i % 30);
          answers.push({ offset, ...(await pageIds(checkpoints, 5, offset)) });
        }
      };
      await Promise.all([creating, reader(0), reader(7), reader(13)]);

      // New work orders never invalidate the checkpoints: the total and the check see the same rows.
      assert.equal(checkpoints.fullWalks, 1);
      // Creates only add newer work orders, so the list holding `total` rows is the list before,
      // preceded by the newest (total - before) of the created ones: each answer must be its slice.
      const created = (await wholeList()).slice(0, 60);
      for (const answer of answers) {
        const added = answer.total - before.length;
        assert.ok(added >= 0 && added <= 60, `total ${answer.total}`);
        const listThen = [...created.slice(60 - added), ...before];
        assert.deepEqual(answer.ids, listThen.slice(answer.offset, answer.offset + 5), `offset ${answer.offset}, total ${answer.total}`);
      }
    });

    it('reads a shallow page and its total from one snapshot while work orders are being created, filtered or not', async () => {
      const checkpoints = new ListCheckpoints(1024); // every page read here is a shallow one
      const before = await wholeList();
      const start = Date.parse('2028-01-01T00:00:00.000Z');
      const creating = (async () => {
        for (let i = 0; i < 60; i++) await insertAt(new Date(start + i * 1000).toISOString(), 'OPEN');
      })();
      const answers: { offset: number; ids: string[]; total: number; filtered: boolean }[] = [];
      const reader = async (first: number, filtered: boolean) => {
        for (let i = first; i < first + 40; i++) {
          const offset = 1 + (i % 30);
          // A category filter goes through COUNT(*) and a page query; no filter, through the maintained counts.
          const { recordsJson, total } = await records.lists.listAsJson(db, tenant.orgId, filtered ? { categoryId } : {}, { limit: 5, offset }, checkpoints);
          answers.push({ offset, total, filtered, ids: (JSON.parse(`[${recordsJson}]`) as { id: string }[]).map((record) => record.id) });
        }
      };
      await Promise.all([creating, reader(0, false), reader(7, true), reader(13, false), reader(19, true)]);

      const created = (await wholeList()).slice(0, 60);
      for (const answer of answers) {
        const added = answer.total - before.length;
        assert.ok(added >= 0 && added <= 60, `total ${answer.total}`);
        const listThen = [...created.slice(60 - added), ...before];
        assert.deepEqual(answer.ids, listThen.slice(answer.offset, answer.offset + 5), `offset ${answer.offset}, total ${answer.total}, filtered: ${answer.filtered}`);
      }
    });

    it('stops using a status list\'s checkpoints once a work order enters or leaves it, and rebuilds them once it holds still', async () => {
      // Older than every other work order here: a list of their own, behind everything the tests above read.
      const base = Date.parse('2020-01-01T00:00:00.000Z');
      for (let i = 0; i < 40; i++) await insertAt(new Date(base + i * 1000).toISOString(), 'CANCELLED');
      const checkpoints = new ListCheckpoints(4);
      const deep = async () => {
        const whole = await wholeList('CANCELLED');
        const offset = Math.floor(whole.length / 2) - 1; // the middle: the page nearest to neither end
        const page = await pageIds(checkpoints, 3, offset, 'CANCELLED');
        assert.deepEqual(page.ids, whole.slice(offset, offset + 3));
        assert.equal(page.total, whole.length);
      };
      await deep();
      assert.equal(checkpoints.fullWalks, 1);
      const taken = [...(checkpoints.cachedFor({ orgId: tenant.orgId, status: 'CANCELLED' }) ?? [])];
      await deep();
      assert.equal(checkpoints.fullWalks, 1, 'nothing moved: the same checkpoints serve');

      // The oldest cancelled work order leaves the list: every position after it shifts by one (the
      // count check alone would see that too: the total fell; the next test takes that away).
      const oldest = (await wholeList('CANCELLED')).at(-1)!;
      await changeStatus(oldest, 'OPEN');
      await deep();
      assert.equal(checkpoints.fullWalks, 1, 'the first deep page after a move walks the plain way');
      assert.deepEqual(checkpoints.cachedFor({ orgId: tenant.orgId, status: 'CANCELLED' }), taken, 'and keeps the old checkpoints unused');
      await deep();
      assert.equal(checkpoints.fullWalks, 2, 'held still since: rebuilt');
      assert.notDeepEqual(checkpoints.cachedFor({ orgId: tenant.orgId, status: 'CANCELLED' }), taken, 'every position moved up by one');

      // A work order entering the middle of the list (created before most of it) shifts them too.
      await changeStatus(oldest, 'CANCELLED');
      await deep();
      await changeStatus((await wholeList('OPEN'))[0]!, 'CANCELLED');
      await deep();
      assert.equal(checkpoints.fullWalks, 2, 'still moving: no rebuild');
      await deep();
      assert.equal(checkpoints.fullWalks, 3);
    });

    /** Changes a status the way another writer would (an older release, an operator's UPDATE): records and counts, nothing else. */
    async function changeStatusByHand(id: string, to: string, within?: Executor): Promise<void> {
      const write = async (tx: Executor) => {
        const { status } = await tx.selectFrom('records').select('status').where('id', '=', id).executeTakeFirstOrThrow();
        await tx.updateTable('records').set({ status: to }).where('id', '=', id).execute();
        // The previous release's count: an upsert of each counter row (on PostgreSQL this release appends deltas instead).
        for (const [counted, delta] of [[status, -1], [to, 1]] as const) {
          await tx
            .insertInto('record_counters')
            .values({ org_id: tenant.orgId, status: counted, count: delta })
            .onConflict((oc) => oc.columns(['org_id', 'status']).doUpdateSet((eb) => ({ count: eb('record_counters.count', '+', delta) })))
            .execute();
        }
      };
      if (within) await write(within);
      else await testApp.context.database.db.transaction().execute(write);
    }

    async function moves(status: string): Promise<number> {
      return (await records.counts.statusTotal(db, tenant.orgId, status)).moves;
    }

    it('notices one work order leaving a status list and another entering it (same total), whoever wrote the change', async () => {
      // A block of its own at the oldest end of the IN_PROGRESS list (2019, older than everything above).
      const base = Date.parse('2019-01-01T00:00:00.000Z');
      const block = block2019;
      for (let i = 0; i < 36; i++) block.push(await insertAt(new Date(base + i * 1000).toISOString(), 'IN_PROGRESS'));
      const entering = await insertAt(new Date(base + 20_500).toISOString(), 'COMPLETED'); // sorts in the middle of the block
      const checkpoints = new ListCheckpoints(4);
      await assertEveryPage(checkpoints, [3], 'before', 'IN_PROGRESS');
      const taken = checkpoints.cachedFor({ orgId: tenant.orgId, status: 'IN_PROGRESS' });
      assert.ok((taken?.length ?? 0) >= 8, 'deep pages were read from checkpoints');
      const before = { inProgress: await moves('IN_PROGRESS'), completed: await moves('COMPLETED') };

      // The second oldest leaves and one enters at the 21st place: every checkpoint between the two now
      // names the wrong entry, yet the total and the count after the last checkpoint are unchanged.
      // The change is written as an older release or an operator would: records and counts only.
      await changeStatusByHand(block[1]!, 'COMPLETED');
      await changeStatusByHand(entering, 'IN_PROGRESS');
      assert.equal(await moves('IN_PROGRESS'), before.inProgress + 2, 'the trigger counted each move once');
      assert.equal(await moves('COMPLETED'), before.completed + 2);
      await assertEveryPage(checkpoints, [3], 'after two moves by hand', 'IN_PROGRESS');
      assert.notDeepEqual(checkpoints.cachedFor({ orgId: tenant.orgId, status: 'IN_PROGRESS' }), taken, 'rebuilt for the new list');
    });

    it('keeps no checkpoints read inside a transaction that may yet roll back', async () => {
      // The 2019 block of the test above, oldest first, less the one that left it there.
      const block = block2019.filter((id) => id !== block2019[1]);
      const middle = Math.floor((await wholeList('IN_PROGRESS')).length / 2);
      const checkpoints = new ListCheckpoints(4);
      const rolledBack = new Error('roll back');
      // Inside: one of the oldest leaves the list (its generation moves on), and deep pages are read
      // until the checkpoints of that list are taken. None of it commits.
      await assert.rejects(
        testApp.context.database.db.transaction().execute(async (tx) => {
          await changeStatusByHand(block[2]!, 'CANCELLED', tx);
          for (let i = 0; i < 3; i++) {
            const { recordsJson } = await records.lists.listAsJson(tx, tenant.orgId, { status: 'IN_PROGRESS' }, { limit: 3, offset: middle }, checkpoints);
            assert.equal((JSON.parse(`[${recordsJson}]`) as unknown[]).length, 3);
          }
          throw rolledBack;
        }),
        rolledBack,
      );
      assert.equal(checkpoints.cachedFor({ orgId: tenant.orgId, status: 'IN_PROGRESS' }), undefined);
      // Outside, another one leaves: the same total and the same generation the rolled-back list had,
      // but a different list. Checkpoints of the rolled-back one would skip a row and repeat another.
      await changeStatusByHand(block[20]!, 'CANCELLED');
      await assertEveryPage(checkpoints, [3], 'after the rollback', 'IN_PROGRESS');
    });

    it('takes a list\'s checkpoints once when deep pages arrive together, the others waiting for them instead of walking', async () => {
      const checkpoints = new ListCheckpoints(4);
      const whole = await wholeList();
      const offset = Math.floor(whole.length / 2);
      assert.ok(whole.length >= 200, `a list long enough that taking its checkpoints outlasts a request's first query (${whole.length})`);
      const pages = await Promise.all(Array.from({ length: 8 }, () => pageIds(checkpoints, 5, offset)));
      for (const page of pages) {
        assert.equal(page.total, whole.length);
        assert.deepEqual(page.ids, whole.slice(offset, offset + 5));
      }
      assert.equal(checkpoints.fullWalks, 1);
      assert.equal(checkpoints.plainWalks, 0, 'no page walked the plain way while the checkpoints were being taken');

      // A request that took checkpoints from scratch and then gave up (its snapshot did not commit)
      // lets the page waiting for it go on, which then takes them itself.
      const abandoned = new ListCheckpoints(4);
      const taken = await abandoned.checkpointsFor(db, { orgId: tenant.orgId }, whole.length);
      assert.ok(taken && 'keys' in taken);
      const waiting = pageIds(abandoned, 5, offset);
      await waitFor(() => abandoned.waits === 1, 10_000, 'the page to wait for the checkpoints being taken');
      taken.done(false);
      assert.deepEqual((await waiting).ids, whole.slice(offset, offset + 5));
      assert.equal(abandoned.fullWalks, 2);
      assert.equal(abandoned.plainWalks, 0);
      assert.ok(abandoned.cachedFor({ orgId: tenant.orgId }), 'the waiting page kept the checkpoints it took');

      // One never done with them (a caller that forgot) holds a waiting page up for the wait's bound
      // only: it then reads again, and walks the plain way since the rebuild is still underway.
      const forgotten = new ListCheckpoints(4, 65_536, 200);
      assert.ok(await forgotten.checkpointsFor(db, { orgId: tenant.orgId }, whole.length));
      assert.deepEqual((await pageIds(forgotten, 5, offset)).ids, whole.slice(offset, offset + 5));
      assert.equal(forgotten.waits, 1);
      assert.equal(forgotten.plainWalks, 1);
    });
  });
}
