// Migration 0016 drops the foreign key of work-order history on PostgreSQL (the statement that writes an
// entry also writes its work order); its `down` must give a previous release the key back, and running
// `up` again (a process that migrates at start) must be harmless.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { historyWithoutForeignKey } from '../../src/db/migrations/0016-history-without-foreign-key.js';
import { POSTGRES_URL } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, type TestApp } from '../helpers/test-app.js';

if (POSTGRES_URL) {
  describe('migration 0016: work-order history without a foreign key (PostgreSQL)', () => {
    let service: TestApp;
    before(async () => {
      service = await startTestApp('postgres');
    });
    after(async () => {
      await service?.close();
    });

    const foreignKeys = async () =>
      (
        await sql<{ name: string }>`
          SELECT conname AS name FROM pg_constraint
          WHERE conrelid = to_regclass('record_events') AND contype = 'f'`.execute(service.context.database.db)
      ).rows.map((row) => row.name);

    it('has no key on a migrated database, gives it back on the way down, and drops it again on the way up', async () => {
      const db = service.context.database.db;
      assert.deepEqual(await foreignKeys(), []);

      const tenant = await service.newTenant();
      const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(await seedCategory(tenant), { assignee: 'Ann' }) });
      assert.equal(created.statusCode, 201, created.body);
      const started = await tenant.request({ method: 'POST', url: `/api/v1/records/${created.json().id}/start`, payload: {} });
      assert.equal(started.statusCode, 200, started.body);

      await historyWithoutForeignKey.down!(db, 'postgres');
      assert.deepEqual(await foreignKeys(), ['record_events_record_id_fkey'], 'the history written meanwhile satisfies the key');
      await assert.rejects(
        sql`INSERT INTO record_events (id, org_id, record_id, action, data, created_at) VALUES ('evt_orphan', ${tenant.orgId}, 'rec_none', 'x', '{}', 'now')`.execute(db),
        /foreign key/,
      );

      await historyWithoutForeignKey.up(db, 'postgres');
      await historyWithoutForeignKey.up(db, 'postgres');
      assert.deepEqual(await foreignKeys(), []);
    });
  });
}
