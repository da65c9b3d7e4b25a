import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { TABLE_COLUMNS } from '../../src/db/table-columns.js';
import { createPostgresSchema, POSTGRES_URL, withSchemaChangeLock } from '../helpers/databases.js';

/** Each table's columns as the migrations leave them, by table name. */
async function migratedColumns(database: Database): Promise<Record<string, string[]>> {
  const rows =
    database.dialect === 'postgres'
      ? (await sql<{ table_name: string; column_name: string }>`SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`.execute(database.db)).rows
      : (await sql<{ table_name: string; column_name: string }>`SELECT m.name AS table_name, p.name AS column_name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'`.execute(database.db)).rows;
  const columns: Record<string, string[]> = {};
  for (const row of rows) (columns[row.table_name] ??= []).push(row.column_name);
  return columns;
}

describe('the column registry', () => {
  it('names exactly the columns the migrations create, for every table the code knows (SQLite)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-columns-'));
    const database = openDatabase({ sqlitePath: path.join(dir, 'wo.sqlite') });
    try {
      await migrateToLatest(database);
      const migrated = await migratedColumns(database);
      for (const [table, columns] of Object.entries(TABLE_COLUMNS)) {
        // PostgreSQL's own table, which SQLite (counting in place) does not have.
        if (table === 'record_count_deltas') continue;
        assert.deepEqual([...columns].sort(), (migrated[table] ?? []).sort(), table);
      }
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

if (POSTGRES_URL) {
  describe('explicit columns on PostgreSQL', () => {
    let database: Database;
    let dropSchema: () => Promise<void>;
    before(async () => {
      const { schema, drop } = await createPostgresSchema();
      dropSchema = drop;
      database = openDatabase({ url: POSTGRES_URL, schema, poolSize: 1 });
      await withSchemaChangeLock(() => migrateToLatest(database));
    });
    after(async () => {
      await database?.close();
      await dropSchema?.();
    });

    it('names exactly the columns the migrations create, for every table the code knows', async () => {
      const migrated = await migratedColumns(database);
      for (const [table, columns] of Object.entries(TABLE_COLUMNS)) assert.deepEqual([...columns].sort(), (migrated[table] ?? []).sort(), table);
    });

    it('sends selectAll() of one table as its columns by name, and keeps * over a join', () => {
      const one = database.db.selectFrom('categories').selectAll().where('id', '=', 'c').compile().sql;
      assert.equal(one, 'select "id", "org_id", "name", "description", "created_at", "updated_at", "version" from "categories" where "id" = $1');
      const qualified = database.db.selectFrom('organizations').selectAll('organizations').compile().sql;
      assert.equal(qualified, 'select "id", "name", "currency", "created_at" from "organizations"');
      const joined = database.db.selectFrom('records').innerJoin('categories', 'categories.id', 'records.category_id').selectAll().compile().sql;
      assert.match(joined, /^select \* from "records" inner join/);
      const returning = database.db.deleteFrom('organizations').where('id', '=', 'o').returningAll().compile().sql;
      assert.equal(returning, 'delete from "organizations" where "id" = $1 returning "id", "name", "currency", "created_at"');
    });

    it('prepares a read of a whole row once per connection, and it keeps working after a migration adds a column', async () => {
      const read = () => database.db.selectFrom('organizations').selectAll().where('id', '=', 'org_1').execute();
      await sql`INSERT INTO organizations (id, name, created_at) VALUES ('org_1', 'Acme', '2026-01-01T00:00:00.000Z')`.execute(database.db);
      await read();
      await read();
      const prepared = (await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements WHERE statement LIKE 'select "id", "name", "currency", "created_at" from "organizations"%'`.execute(database.db)).rows;
      assert.equal(prepared.length, 1);
      await sql`ALTER TABLE organizations ADD COLUMN note text`.execute(database.db);
      assert.deepEqual(await read(), [{ id: 'org_1', name: 'Acme', currency: 'USD', created_at: '2026-01-01T00:00:00.000Z' }]);
    });
  });
}
