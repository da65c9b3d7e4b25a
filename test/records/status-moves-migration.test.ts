// Migration 0009 adds `record_counters.moves` and the trigger that keeps it. It must upgrade a database
// that already holds work orders, survive being run again (SQLite migrations are not transactional: a
// process killed half-way runs it again at the next start), and count each move once on each side.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { Migrator, sql, type Migration } from 'kysely';
import type { DialectName, Executor } from '../../src/db/database.js';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { statusListMoves } from '../../src/db/migrations/0009-status-list-moves.js';
import { idempotencyValueFingerprint } from '../../src/db/migrations/0010-idempotency-value-fingerprint.js';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { workOrderRow } from '../helpers/records.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const now = '2026-01-01T00:00:00.000Z';

async function insertWorkOrder(db: Executor, orgId: string, id: string, status: string): Promise<void> {
  const categoryId = `cat_${orgId}`;
  await db
    .insertInto('categories')
    .values({ id: categoryId, org_id: orgId, name: 'Upgrade', description: null, created_at: now, updated_at: now, version: 1 })
    .onConflict((oc) => oc.doNothing())
    .execute();
  // The row as the schema of 0008 has it: the columns of later migrations (0020's source, overdue_for; 0021's assignees; 0024's costs, labor_minutes; 0027's request_id; 0028's custom_fields, checklists) do not exist yet.
  const { source: _source, overdue_for: _overdueFor, assignees: _assignees, costs: _costs, labor_minutes: _laborMinutes, custom_fields: _customFields, checklists: _checklists, request_id: _requestId, ...row } = workOrderRow({ id, orgId, categoryId, status, createdAt: now });
  // Typed for the schema of today, which requires `assignees` (its column's default fills it in at 0021).
  await db.insertInto('records').values(row as never).execute();
}

async function movesByStatus(db: Executor, orgId: string): Promise<Record<string, number>> {
  const rows = await db.selectFrom('record_counters').select(['status', 'moves']).where('org_id', '=', orgId).execute();
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.moves)]));
}

/** Runs the migration twice more, then checks that status changes (and only they) are counted once per side. */
async function checkCountsEachMoveOnce(db: Executor, dialect: DialectName, orgId: string, recordId: string): Promise<void> {
  await statusListMoves.up(db, dialect);
  await statusListMoves.up(db, dialect);
  const before = await movesByStatus(db, orgId);
  await db.updateTable('records').set({ status: 'ASSIGNED' }).where('id', '=', recordId).execute();
  await db.updateTable('records').set({ description: 'not a move' }).where('id', '=', recordId).execute();
  await db.updateTable('records').set({ status: 'ASSIGNED' }).where('id', '=', recordId).execute(); // unchanged: not a move
  assert.deepEqual(await movesByStatus(db, orgId), { ...before, OPEN: before.OPEN! + 1, ASSIGNED: before.ASSIGNED! + 1 });
}

describe('status moves migration (0009)', () => {
  it('upgrades a SQLite database that already holds work orders, and can run again', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-moves-'));
    const database = openDatabase({ sqlitePath: path.join(dir, 'wo.sqlite') });
    try {
      const byName: Record<string, Migration> = {};
      for (const m of migrations) byName[m.name] = { up: (db) => m.up(db, 'sqlite') };
      const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => byName } });
      assert.equal((await migrator.migrateTo('0008-outbox-cursor')).error, undefined);
      const db = database.db;
      await db.insertInto('organizations').values({ id: 'org_u', name: 'u', created_at: now }).execute();
      await insertWorkOrder(db, 'org_u', 'rec_u1', 'OPEN');
      await insertWorkOrder(db, 'org_u', 'rec_u2', 'ASSIGNED');
      await db.insertInto('record_counters').values([{ org_id: 'org_u', status: 'OPEN', count: 1 }, { org_id: 'org_u', status: 'ASSIGNED', count: 1 }] as never).execute();

      assert.equal((await migrateToLatest(database))[0], '0009-status-list-moves'); // later migrations follow it
      assert.deepEqual(await movesByStatus(db, 'org_u'), { OPEN: 0, ASSIGNED: 0 });
      await checkCountsEachMoveOnce(db, 'sqlite', 'org_u', 'rec_u1');
      // 0010 as well: its column is there, and running it again changes nothing.
      await idempotencyValueFingerprint.up(db, 'sqlite');
      const columns = await sql<{ name: string }>`SELECT name FROM pragma_table_info('idempotency_keys')`.execute(db);
      assert.equal(columns.rows.filter((column) => column.name === 'value_fingerprint').length, 1);
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const dialect of TEST_DIALECTS) {
    describe(dialect, () => {
      let testApp: TestApp;
      after(() => testApp?.close());

      it('counts each move once on each side after being run again', async () => {
        testApp = await startTestApp(dialect);
        const db = testApp.context.database.db;
        const tenant = await testApp.newTenant();
        await insertWorkOrder(db, tenant.orgId, 'rec_m1', 'OPEN');
        await db.insertInto('record_counters').values([{ org_id: tenant.orgId, status: 'OPEN', count: 1 }, { org_id: tenant.orgId, status: 'ASSIGNED', count: 0 }]).execute();
        await checkCountsEachMoveOnce(db, dialect, tenant.orgId, 'rec_m1');
      });
    });
  }
});
