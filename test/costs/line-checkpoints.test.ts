// GET /cost-lines reads its totals from cost_line_counters (kept by triggers, migration 0029) and its
// deep pages from checkpoints (src/costs/line-lists.ts). Every page must still be the exact slice of
// its list, oldest change first, through new lines (some older than the checkpoints), timestamp ties,
// posts (a line leaves the unposted list and moves to the end of the others) and deletes (a returned
// part's line), and the counters must equal a COUNT of the lines, also after the migration runs again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Executor } from '../../src/db/database.js';
import { sql } from 'kysely';
import { CostLineCheckpoints, CostLineLists } from '../../src/costs/line-lists.js';
import { foldCostLineCountDeltas, postgresLineListSize } from '../../src/costs/line-counts-postgres.js';
import { sqliteLineListSize } from '../../src/costs/line-counts-sqlite.js';
import type { CostLinesTable } from '../../src/costs/tables.js';
import { costLineCounters } from '../../src/db/migrations/0029-cost-line-counters.js';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { createWorkOrder, startTestApp, type Tenant, type TestApp } from '../helpers/test-app.js';

/** A deterministic pseudo-random sequence, so a failure can be replayed. */
function randomSequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const base = Date.parse('2027-01-01T00:00:00.000Z');
const instant = (seconds: number) => new Date(base + seconds * 1000).toISOString();

for (const dialect of TEST_DIALECTS) {
  describe(`cost-line lists from counters and checkpoints (${dialect})`, () => {
    let testApp: TestApp;
    let db: Executor;
    let tenant: Tenant;
    let recordId: string;
    let serial = 0;

    before(async () => {
      testApp = await startTestApp(dialect);
      db = testApp.context.database.db;
      tenant = await testApp.newTenant();
      recordId = await createWorkOrder(tenant);
    });

    after(() => testApp.close());

    /** A line written straight into storage, as the costs service writes one (the triggers count it). */
    async function insertLine(updatedAt: string): Promise<string> {
      const id = `cst_${String(++serial).padStart(26, '0')}`;
      const line: CostLinesTable = {
        id, org_id: tenant.orgId, record_id: recordId, kind: 'other', description: `line ${serial}`, amount_minor: 100, currency: 'EUR',
        reverses_id: null, posted: 0, posted_at: null, erp_document_id: null, person_id: null, minutes: null, started_at: null,
        ended_at: null, rate_minor: null, labor_category: null, note: null, part_id: null, location_id: null, quantity_milli: null,
        unit_cost_minor: null, movement_id: null, vendor_id: null, invoice_ref: null, attachment_id: null, created_at: updatedAt, updated_at: updatedAt,
      };
      await db.insertInto('cost_lines').values(line).execute();
      return id;
    }

    async function wholeList(posted?: number): Promise<string[]> {
      let query = db.selectFrom('cost_lines').select('id').where('org_id', '=', tenant.orgId);
      if (posted !== undefined) query = query.where('posted', '=', posted);
      return (await query.orderBy('updated_at', 'asc').orderBy('id', 'asc').execute()).map((row) => row.id);
    }

    async function assertEveryPage(lists: CostLineLists, label: string): Promise<void> {
      for (const posted of [undefined, false, true]) {
        const whole = await wholeList(posted === undefined ? undefined : Number(posted));
        for (const limit of [1, 3, 7]) {
          for (let offset = 0; offset <= whole.length + 1; offset++) {
            const page = await lists.page(db, tenant.orgId, posted === undefined ? {} : { posted }, { limit, offset });
            const where = `${label} (posted ${String(posted)}): limit ${limit}, offset ${offset}`;
            assert.equal(page.total, whole.length, `${where}: total`);
            assert.deepEqual(page.rows.map((row) => row.id), whole.slice(offset, offset + limit), where);
          }
        }
      }
    }

    /** The counters by `posted`, with on PostgreSQL the deltas not folded yet: what a list reads. */
    async function counters(): Promise<Record<number, { lines: number; moves: number }>> {
      const kept: Record<number, { lines: number; moves: number }> = {};
      const add = (posted: number, lines: unknown, moves: unknown) => {
        const entry = (kept[posted] ??= { lines: 0, moves: 0 });
        entry.lines += Number(lines);
        entry.moves += Number(moves);
      };
      for (const row of await db.selectFrom('cost_line_counters').select(['posted', 'lines', 'moves']).where('org_id', '=', tenant.orgId).execute()) add(row.posted, row.lines, row.moves);
      if (dialect === 'postgres') {
        const deltas = await sql<{ posted: number; lines_delta: number; moves_delta: number }>`SELECT posted, lines_delta, moves_delta FROM cost_line_count_deltas WHERE org_id = ${tenant.orgId}`.execute(db);
        for (const row of deltas.rows) add(row.posted, row.lines_delta, row.moves_delta);
      }
      return kept;
    }

    async function assertCountersExact(): Promise<void> {
      const counted = await db.selectFrom('cost_lines').select(['posted', (eb) => eb.fn.countAll<number>().as('n')]).where('org_id', '=', tenant.orgId).groupBy('posted').execute();
      const lines = Object.fromEntries(Object.entries(await counters()).map(([posted, { lines }]) => [posted, lines]).filter(([, n]) => n !== 0));
      assert.deepEqual(lines, Object.fromEntries(counted.map((row) => [row.posted, Number(row.n)])));
    }

    /** cost_line_counters.moves by `posted`: what tells checkpoints of a list that an entry left it or moved in it. */
    async function moves(): Promise<Record<number, number>> {
      return Object.fromEntries(Object.entries(await counters()).map(([posted, { moves }]) => [posted, moves]));
    }

    it('answers every page as the slice of its list through inserts (some older than the checkpoints), ties, posts and deletes', async () => {
      const random = randomSequence(dialect === 'sqlite' ? 5 : 13);
      const ids: string[] = [];
      for (let i = 0; i < 90; i++) ids.push(await insertLine(instant(i)));
      const lists = new CostLineLists(dialect === 'postgres' ? postgresLineListSize : sqliteLineListSize, new CostLineCheckpoints(4));
      await assertEveryPage(lists, 'seeded');
      assert.ok((lists.checkpoints.cachedFor({ orgId: tenant.orgId, posted: 0 })?.length ?? 0) > 10, 'deep pages took checkpoints');

      // Ties on the timestamp, and lines older than every checkpoint (a clock that went back).
      for (let i = 0; i < 6; i++) ids.push(await insertLine(instant(50)));
      for (let i = 0; i < 4; i++) ids.push(await insertLine(instant(-10 - i)));
      for (let i = 0; i < 12; i++) ids.push(await insertLine(instant(200 + i)));
      await assertEveryPage(lists, 'after inserts');

      // Posts: a line leaves the unposted list from its middle and lands at the end of the others.
      const movesBeforePosts = await moves();
      for (let i = 0; i < 15; i++) {
        const id = ids[Math.floor(random() * ids.length)]!;
        await db.updateTable('cost_lines').set({ posted: 1, posted_at: instant(500 + i), updated_at: instant(500 + i), erp_document_id: `JE-${i}` }).where('id', '=', id).where('posted', '=', 0).execute();
      }
      const posted = (await wholeList(1)).length;
      assert.deepEqual(await moves(), { 0: (movesBeforePosts[0] ?? 0) + posted, 1: 0 }, 'each post is a move of the unposted list, and an append to the posted one');
      await assertEveryPage(lists, 'after posts');
      // A post deep in the unposted list with a line older than every other: the count after the last
      // checkpoint and the total both hold still, so only the counted move tells the positions shifted.
      for (let round = 0; round < 3; round++) {
        const deep = (await wholeList(0))[60]!;
        await db.updateTable('cost_lines').set({ posted: 1, posted_at: instant(600 + round), updated_at: instant(600 + round), erp_document_id: `JE-deep-${round}` }).where('id', '=', deep).execute();
        ids.push(await insertLine(instant(-100 - round)));
        await assertEveryPage(lists, `after a deep post and an older line, round ${round}`);
      }
      // Deletes (a part returned before the ERP posted its line), and a change that moves nothing.
      const unposted = await wholeList(0);
      const movesBefore = await moves();
      for (let i = 0; i < 8; i++) await db.deleteFrom('cost_lines').where('id', '=', unposted[i * 9]!).execute();
      await db.updateTable('cost_lines').set({ description: 'renamed' }).where('org_id', '=', tenant.orgId).execute();
      assert.deepEqual(await moves(), { ...movesBefore, 0: movesBefore[0]! + 8 }, 'each delete is a move of the unposted list; a description is not');
      await assertEveryPage(lists, 'after deletes');
      await assertCountersExact();
    });

    it('sets the counters again from the lines when the migration runs again (a start after a kill mid-migration)', async () => {
      await db.deleteFrom('cost_line_counters').where('org_id', '=', tenant.orgId).execute();
      await costLineCounters.up(db as never, dialect);
      await assertCountersExact();
      await insertLine(instant(900));
      await assertCountersExact();
      await assertEveryPage(new CostLineLists(dialect === 'postgres' ? postgresLineListSize : sqliteLineListSize, new CostLineCheckpoints(4)), 'after the migration ran again');
    });

    if (dialect === 'postgres') {
      it('folds the appended deltas into the counters without changing what a list reads (PostgreSQL)', async () => {
        await insertLine(instant(901));
        const before = await counters();
        const deltas = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM cost_line_count_deltas WHERE org_id = ${tenant.orgId}`.execute(db)).rows[0]!.n);
        assert.ok((await deltas()) > 0, 'writes appended deltas');
        assert.ok((await foldCostLineCountDeltas(testApp.context.database.db)) > 0);
        assert.equal(await deltas(), 0);
        assert.deepEqual(await counters(), before);
        await assertCountersExact();
      });
    }
  });
}
