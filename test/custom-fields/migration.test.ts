// Migration 0028 gives existing work orders, assets and locations `customFields: {}` (and work orders
// `checklists: []`) through column defaults: no row is rewritten at upgrade, which on PostgreSQL shows
// as the tables keeping their files (relfilenode) and each row its place (ctid).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { migrations } from '../../src/db/migrations/index.js';
import { checklistsAndCustomFields } from '../../src/db/migrations/0028-checklists-custom-fields.js';
import { openEmptyDatabase, TEST_DIALECTS } from '../helpers/databases.js';
import { workOrderRow } from '../helpers/records.js';

const now = '2026-01-01T00:00:00.000Z';

describe('checklists and custom fields migration (0028)', () => {
  for (const dialect of TEST_DIALECTS) {
    it(`gives existing rows {} and [] without rewriting them, and can run again [${dialect}]`, async () => {
      const { database, close } = await openEmptyDatabase(dialect);
      try {
        const db = database.db;
        for (const migration of migrations.slice(0, migrations.indexOf(checklistsAndCustomFields))) await migration.up(db, dialect);
        await db.insertInto('organizations').values({ id: 'org_m', name: 'm', created_at: now }).execute();
        await db.insertInto('categories').values({ id: 'cat_m', org_id: 'org_m', name: 'Upgrade', description: null, created_at: now, updated_at: now, version: 1 }).execute();
        const { custom_fields: _customFields, checklists: _checklists, ...row } = workOrderRow({ id: 'rec_m', orgId: 'org_m', categoryId: 'cat_m', status: 'OPEN', createdAt: now });
        await db.insertInto('records').values(row as never).execute();
        await sql`INSERT INTO locations (id, org_id, name, name_search, metadata, created_at, updated_at, version) VALUES ('loc_m', 'org_m', 'Plant', 'plant', '{}', ${now}, ${now}, 1)`.execute(db);
        await sql`INSERT INTO assets (id, org_id, name, name_search, tag, tag_search, status, metadata, created_at, updated_at, version) VALUES ('ast_m', 'org_m', 'Boiler', 'boiler', 'B-1', 'b-1', 'ACTIVE', '{}', ${now}, ${now}, 1)`.execute(db);
        const files = async () => (dialect === 'postgres' ? (await sql<{ relname: string; relfilenode: number }>`SELECT relname, relfilenode FROM pg_class WHERE relname IN ('records', 'assets', 'locations') AND relnamespace = current_schema()::regnamespace ORDER BY relname`.execute(db)).rows : []);
        const places = async () => (dialect === 'postgres' ? (await sql<{ ctid: string }>`SELECT ctid::text AS ctid FROM records WHERE id = 'rec_m'`.execute(db)).rows : []);
        const [filesBefore, placesBefore] = [await files(), await places()];

        await checklistsAndCustomFields.up(db, dialect);
        await checklistsAndCustomFields.up(db, dialect); // SQLite migrations are not transactional: a killed start runs it again

        assert.deepEqual(await files(), filesBefore);
        assert.deepEqual(await places(), placesBefore);
        const record = await db.selectFrom('records').select(['custom_fields', 'checklists']).where('id', '=', 'rec_m').executeTakeFirstOrThrow();
        assert.deepEqual(record, { custom_fields: '{}', checklists: '[]' });
        for (const table of ['assets', 'locations'] as const) {
          const values = await db.selectFrom(table).select('custom_fields').execute();
          assert.deepEqual(values, [{ custom_fields: '{}' }]);
        }
      } finally {
        await close();
      }
    });
  }
});
