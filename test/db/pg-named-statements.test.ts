import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.js';
import { createPostgresSchema, POSTGRES_URL } from '../helpers/databases.js';

if (POSTGRES_URL) {
  describe('named statements on PostgreSQL', () => {
    let database: Database;
    let dropSchema: () => Promise<void>;
    before(async () => {
      const { schema, drop } = await createPostgresSchema();
      dropSchema = drop;
      database = openDatabase({ url: POSTGRES_URL, schema, poolSize: 1 });
      await sql`CREATE TABLE items (id integer PRIMARY KEY, name text)`.execute(database.db);
    });
    after(async () => {
      await database?.close();
      await dropSchema?.();
    });

    const prepared = async () =>
      (await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements WHERE name LIKE 'wo\\_%'`.execute(database.db)).rows.map((row) => row.statement);

    it('prepares a statement with parameters once per connection and reuses it', async () => {
      for (let id = 1; id <= 3; id++) await database.db.insertInto('items' as never).values({ id, name: `item ${id}` } as never).execute();
      const statements = (await prepared()).filter((text) => text.startsWith('insert into "items"'));
      assert.equal(statements.length, 1);
      const rows = await database.db.selectFrom('items' as never).select(['id' as never]).where('id' as never, '>', 1 as never).execute();
      assert.equal(rows.length, 2);
    });

    it('leaves statements that return * unnamed, so a column added by a migration cannot break them', async () => {
      const all = () => database.db.selectFrom('items' as never).selectAll().where('id' as never, '=', 1 as never).execute();
      await all();
      assert.equal((await prepared()).some((text) => text.includes('select *')), false);
      await sql`ALTER TABLE items ADD COLUMN note text`.execute(database.db);
      assert.deepEqual(Object.keys((await all())[0] as object).sort(), ['id', 'name', 'note']);
      await database.db.insertInto('items' as never).values({ id: 4, name: 'item 4' } as never).execute();
    });

    // pg closes a pooled connection after 10 s unused by default; the next burst then reconnected
    // and planned every statement again while requests queued (src/db/postgres/open-postgres.ts, POOL_IDLE_TIMEOUT_MS).
    it('keeps its connection, and the statements prepared on it, through a pause longer than 10 s', async () => {
      const backend = async () => (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(database.db)).rows[0]!.pid;
      const before = await backend();
      const preparedBefore = await prepared();
      assert.ok(preparedBefore.length > 0);
      // Waiting out the pool's former idle timeout is the behaviour under test, not a guess at timing.
      await new Promise((resolve) => setTimeout(resolve, 10_500));
      assert.equal(await backend(), before);
      assert.deepEqual(await prepared(), preparedBefore);
    });
  });
}
