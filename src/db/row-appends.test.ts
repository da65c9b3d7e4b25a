import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Database } from './database.js';
import { RowAppends } from './row-appends.js';

const POSTGRES_URL = process.env.WO_TEST_DATABASE_URL;

// On a plain database of each kind: two tables, rows appended to both in one step.
for (const dialect of POSTGRES_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const)) {
  describe(`RowAppends (${dialect})`, () => {
    let database: Database;
    let cleanUp: () => Promise<void>;
    before(async () => {
      if (dialect === 'sqlite') {
        const dir = mkdtempSync(path.join(tmpdir(), 'wo-appends-'));
        database = openDatabase({ sqlitePath: path.join(dir, 'appends.sqlite') });
        cleanUp = async () => rmSync(dir, { recursive: true, force: true });
      } else {
        const schema = `wo_appends_${Math.random().toString(36).slice(2, 10)}`;
        const admin = openDatabase({ url: POSTGRES_URL! });
        await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(admin.db);
        database = openDatabase({ url: POSTGRES_URL!, schema });
        cleanUp = async () => {
          await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(admin.db);
          await admin.close();
        };
      }
      await sql`CREATE TABLE records (id text PRIMARY KEY, note text)`.execute(database.db);
      await sql`CREATE TABLE record_events (id text PRIMARY KEY, record_id text NOT NULL REFERENCES records (id), data text)`.execute(database.db);
    });
    after(async () => {
      await database?.close();
      await cleanUp?.();
    });

    const tables = (db: Database['db']) => db as never as Parameters<RowAppends['write']>[0];

    it('writes every row of every table, in one transaction with the rest of its work', async () => {
      await database.db.transaction().execute(async (tx) => {
        const appends = new RowAppends()
          .add('records' as never, { id: 'r1', note: 'first "quoted" note' } as never)
          .add('record_events' as never, { id: 'e1', record_id: 'r1', data: '{}' } as never, { id: 'e2', record_id: 'r1', data: null } as never);
        await appends.write(tables(tx as never));
      });
      const events = await sql<{ id: string; data: string | null }>`SELECT id, data FROM record_events ORDER BY id`.execute(database.db);
      assert.deepEqual(events.rows, [{ id: 'e1', data: '{}' }, { id: 'e2', data: null }]);
      const records = await sql<{ note: string }>`SELECT note FROM records`.execute(database.db);
      assert.deepEqual(records.rows, [{ note: 'first "quoted" note' }]);
    });

    it('writes none of them when one row fails, and the transaction with it', async () => {
      await assert.rejects(
        database.db.transaction().execute(async (tx) => {
          await new RowAppends()
            .add('records' as never, { id: 'r2', note: 'kept only if all are' } as never)
            .add('record_events' as never, { id: 'e3', record_id: 'no such record', data: '{}' } as never)
            .write(tables(tx as never));
        }),
      );
      const records = await sql<{ id: string }>`SELECT id FROM records WHERE id = 'r2'`.execute(database.db);
      assert.equal(records.rows.length, 0);
    });
  });
}
