import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Database } from './database.js';
import { insertRows, wellFormedJson } from './insert-rows.js';
import { TEST_DIALECTS, openEmptyDatabase } from '../../test/helpers/databases.js';

describe('wellFormedJson', () => {
  it('turns only escapes of lone surrogates into U+FFFD, as UTF-8 encoding a bound value does', () => {
    const cases = ['a\ud800b', '\ud83d\ude00', 'x\\ud800', '\\\ud800', '\ud800\udbff', '\udc00', 'plain'];
    for (const text of cases) assert.equal(JSON.parse(wellFormedJson(JSON.stringify(text))), text.toWellFormed(), JSON.stringify(text));
  });
});

// A table shaped like the outbox: a serial column the rows' order decides, text, a bigint, a nullable column.
for (const dialect of TEST_DIALECTS) {
  describe(`insertRows (${dialect})`, () => {
    let database: Database;
    let close: () => Promise<void>;
    before(async () => {
      ({ database, close } = await openEmptyDatabase(dialect));
      const serial = dialect === 'sqlite' ? sql`integer PRIMARY KEY AUTOINCREMENT` : sql`bigserial PRIMARY KEY`;
      await sql`CREATE TABLE outbox_events (seq ${serial}, id text NOT NULL, payload text NOT NULL, feed_seq bigint, dispatched_at text)`.execute(database.db);
    });
    after(async () => {
      await close?.();
    });

    const rowsOf = async () =>
      (await sql<{ seq: number; id: string; payload: string; feed_seq: string | number | null; dispatched_at: string | null }>`SELECT * FROM outbox_events ORDER BY seq`.execute(database.db)).rows.map(
        (row) => ({ id: row.id, payload: row.payload, feed_seq: row.feed_seq === null ? null : Number(row.feed_seq), dispatched_at: row.dispatched_at }),
      );

    it('inserts every row in the order given, with its text, numbers and nulls as they were, whatever the count', async () => {
      const written: Array<{ id: string; payload: string; feed_seq: number | null; dispatched_at: string | null }> = [];
      // Counts that are no power of two, across the SQLite chunk size, and one row.
      for (const count of [1, 3, 300, 2]) {
        const rows = Array.from({ length: count }, (_, i) => ({
          id: `evt_${written.length + i}`,
          payload: JSON.stringify({ note: `"quoted" \\ back\nslash ${i}`, emoji: '😀', unicode: 'Grüße' }),
          feed_seq: i % 2 === 0 ? 2 ** 40 + i : null,
          dispatched_at: null,
        }));
        // Declared as the real table's rows: the test table holds a subset of its columns.
        await insertRows(database.db, 'outbox_events', rows as never);
        written.push(...rows);
      }
      assert.deepEqual(await rowsOf(), written);
      await insertRows(database.db, 'outbox_events', []);
      assert.equal((await rowsOf()).length, written.length, 'an empty batch writes nothing and does not fail');
    });

    it('stores a lone surrogate as a bound value of the same text is stored', async () => {
      await sql`DELETE FROM outbox_events`.execute(database.db);
      const cut = 'half \ud83d';
      await sql`INSERT INTO outbox_events (id, payload) VALUES ('evt_bound', ${cut})`.execute(database.db);
      await insertRows(database.db, 'outbox_events', [{ id: 'evt_cut', payload: cut, feed_seq: null, dispatched_at: null }] as never);
      const [bound, inserted] = await rowsOf();
      assert.equal(inserted!.payload, bound!.payload);
      if (dialect === 'postgres') assert.equal(inserted!.payload, 'half \ufffd');
    });
  });
}
