import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import { openDatabase } from '../db/database.js';
import { DUE_ROW_CLAIMERS } from './due-rows.js';
import { POSTGRES_URL, TEST_DIALECTS, createPostgresSchema, openEmptyDatabase } from '../../test/helpers/databases.js';

const NOW = '2027-01-04T08:00:00.000Z';
const LATER = '2027-01-04T09:00:00.000Z';
// A scratch table of the test's own; the claimer names tables at run time.
const probe = { table: 'due_probe' as never, dueColumn: 'due_at' as never, now: NOW };

for (const dialect of TEST_DIALECTS) {
  describe(`claiming due rows (${dialect})`, () => {
    let database: Database;
    let close: () => Promise<void>;
    /** A second, independent connection pool on the same database: another worker process's. */
    let other: Database | undefined;
    let dropOther: (() => Promise<void>) | undefined;
    const claim = DUE_ROW_CLAIMERS[dialect];

    before(async () => {
      if (dialect === 'postgres') {
        const { schema, drop } = await createPostgresSchema();
        database = openDatabase({ url: POSTGRES_URL!, schema, poolSize: 4 });
        other = openDatabase({ url: POSTGRES_URL!, schema, poolSize: 4 });
        close = async () => {
          await database.close();
          await other!.close();
        };
        dropOther = drop;
      } else {
        ({ database, close } = await openEmptyDatabase(dialect));
      }
      await sql`CREATE TABLE due_probe (id text PRIMARY KEY, due_at text, handled integer NOT NULL DEFAULT 0)`.execute(database.db);
    });
    after(async () => {
      await close?.();
      await dropOther?.();
    });

    async function fill(count: number, dueAt: string): Promise<string[]> {
      await sql`DELETE FROM due_probe`.execute(database.db);
      const ids = Array.from({ length: count }, (_, i) => `row_${String(i).padStart(4, '0')}`);
      for (const id of ids) await sql`INSERT INTO due_probe (id, due_at) VALUES (${id}, ${dueAt})`.execute(database.db);
      return ids;
    }

    it('hands every due row to exactly one of four concurrent claimers, in batches of at most the limit', async () => {
      const ids = await fill(240, NOW);
      const handled: string[] = [];
      let largestBatch = 0;
      const pools = [database, other ?? database];
      const claimer = async (pool: Database) => {
        for (;;) {
          const claimed = await claim(pool.db, { ...probe, limit: 9 }, async (tx, rows) => {
            largestBatch = Math.max(largestBatch, rows.length);
            for (const row of rows as unknown as { id: string }[]) {
              // A round trip per row inside the claim: another claimer runs meanwhile.
              await sql`UPDATE due_probe SET due_at = NULL, handled = handled + 1 WHERE id = ${row.id}`.execute(tx);
              handled.push(row.id);
            }
          });
          if (claimed === 0) return;
        }
      };
      await Promise.all([claimer(pools[0]!), claimer(pools[1]!), claimer(pools[0]!), claimer(pools[1]!)]);
      assert.deepEqual([...handled].sort(), ids, 'each row handed out once');
      assert.ok(largestBatch <= 9 && largestBatch > 0);
      const counts = await sql<{ handled: number }>`SELECT handled FROM due_probe`.execute(database.db);
      assert.ok(counts.rows.every((row) => Number(row.handled) === 1), 'each row handled once in the table');
    });

    it('leaves rows not yet due, and hands out again the rows of a claim whose work failed', async () => {
      await fill(3, LATER);
      await sql`UPDATE due_probe SET due_at = ${NOW} WHERE id = 'row_0001'`.execute(database.db);
      await assert.rejects(
        claim(database.db, { ...probe, limit: 10 }, async (tx, rows) => {
          await sql`UPDATE due_probe SET due_at = NULL WHERE id = ${(rows[0] as unknown as { id: string }).id}`.execute(tx);
          throw new Error('the work failed');
        }),
        /the work failed/,
      );
      const seen: string[] = [];
      const claimed = await claim(database.db, { ...probe, limit: 10 }, async (tx, rows) => {
        for (const row of rows as unknown as { id: string }[]) {
          seen.push(row.id);
          await sql`UPDATE due_probe SET due_at = NULL WHERE id = ${row.id}`.execute(tx);
        }
      });
      assert.equal(claimed, 1);
      assert.deepEqual(seen, ['row_0001'], 'the failed claim’s row is due again; the later rows are not due');
      assert.equal(await claim(database.db, { ...probe, limit: 10 }, async () => assert.fail('nothing is due')), 0);
    });
  });
}
