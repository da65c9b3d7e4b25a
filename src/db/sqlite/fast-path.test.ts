import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, type Transaction } from 'kysely';
import { fastPathOf } from './fast-path.js';
import { preparedQuery } from '../prepared.js';
import { openPair, type TestTables } from '../../../test/helpers/group-commit-pair.js';

describe('SQLite fast path: prepared statements straight on the group-commit driver', () => {
  describe('prepared statements inside a transaction (straight onto the connection)', () => {
    const insertItem = preparedQuery((db, p: { label: string }) => (db as unknown as Kysely<TestTables>).insertInto('items').values({ label: p.label }));
    const countLabel = preparedQuery((db, p: { label: string }) =>
      (db as unknown as Kysely<TestTables>).selectFrom('items').select((eb) => eb.fn.countAll<number>().as('n')).where('label', '=', p.label),
    );

    it('run in the caller\'s transaction: they see its writes, are undone with it, and commit with it', async () => {
      const pair = openPair();
      try {
        await assert.rejects(
          pair.db.transaction().execute(async (tx) => {
            await insertItem(tx as never, { label: 'fast-undone' });
            assert.equal(Number((await countLabel(tx as never, { label: 'fast-undone' })).rows[0]?.n), 1, 'the transaction sees its own write');
            throw new Error('roll back');
          }),
          /roll back/,
        );
        assert.deepEqual(pair.committedLabels(), []);

        await pair.db.transaction().execute(async (tx) => {
          await insertItem(tx as never, { label: 'fast-kept' });
          assert.deepEqual(pair.committedLabels(), [], 'not committed on its own before the transaction ends');
        });
        assert.deepEqual(pair.committedLabels(), ['fast-kept'], 'committed once the transaction returned');
      } finally {
        await pair.close();
      }
    });

    it('reject (not throw) when the statement fails, and leave the transaction to the caller', async () => {
      const pair = openPair();
      try {
        const outcome = await pair.db.transaction().execute(async (tx) => {
          await insertItem(tx as never, { label: 'duplicate' });
          const second = insertItem(tx as never, { label: 'duplicate' });
          assert.ok(second instanceof Promise);
          const error = await second.then(() => undefined, (e: unknown) => e);
          assert.match(String(error), /UNIQUE constraint failed/);
          return 'caught inside';
        });
        assert.equal(outcome, 'caught inside');
        assert.deepEqual(pair.committedLabels(), ['duplicate'], 'the first insert still committed');
      } finally {
        await pair.close();
      }
    });

    it('leave other dialects to Kysely', async () => {
      const other = new Kysely<TestTables>({ dialect: new SqliteDialect({ database: new SqliteDatabase(':memory:') }) });
      try {
        await other.transaction().execute(async (tx) => {
          assert.equal(fastPathOf(tx.getExecutor()), undefined);
        });
      } finally {
        await other.destroy();
      }
    });

    it('never run a statement sent on an ended transaction inside the one in progress', async () => {
      const pair = openPair();
      try {
        let ended!: Transaction<TestTables>;
        await pair.db.transaction().execute(async (tx) => {
          ended = tx;
          await insertItem(tx as never, { label: 'first' });
        });
        let stray!: Promise<unknown>;
        await assert.rejects(
          pair.db.transaction().execute(async (tx) => {
            await insertItem(tx as never, { label: 'inner' });
            // A caller's bug: a statement on a transaction that has already committed.
            stray = insertItem(ended as never, { label: 'stray' }).then(
              () => 'ran',
              () => 'refused',
            );
            throw new Error('roll back inner');
          }),
          /roll back inner/,
        );
        const outcome = await stray;
        const labels = pair.committedLabels();
        assert.ok(!labels.includes('inner'));
        // Had it joined the transaction in progress, it would have been rolled back with it while reporting success.
        assert.equal(labels.includes('stray'), outcome === 'ran', `stray statement ${String(outcome)}, committed labels ${labels.join(',')}`);
      } finally {
        await pair.close();
      }
    });
  });

  describe('prepared statements outside a transaction (straight onto the connection when it is free)', () => {
    const insertItem = preparedQuery((db, p: { label: string }) => (db as unknown as Kysely<TestTables>).insertInto('items').values({ label: p.label }));
    const insertClaimLike = preparedQuery((db, p: { label: string }) => (db as unknown as Kysely<TestTables>).insertInto('items').values({ label: p.label }), {
      returnBeforeCommit: true,
    });
    const labelsLike = preparedQuery((db, p: { pattern: string }) =>
      (db as unknown as Kysely<TestTables>).selectFrom('items').select('label').where('label', 'like', p.pattern).orderBy('id'),
    );

    it('run at once when the connection is free, and a write still returns only once committed', async () => {
      const pair = openPair();
      try {
        const membersBefore = pair.stats.members;
        const pending = insertItem(pair.db as never, { label: 'direct' });
        const onConnection = (pair.sqlite.prepare('SELECT label FROM items').all() as { label: string }[]).map((r) => r.label);
        assert.deepEqual(onConnection, ['direct'], 'ran before the call returned, with no turn of the event loop');
        assert.deepEqual(pair.committedLabels(), [], 'but is not committed yet');
        let settled = false;
        void pending.then(() => (settled = true));
        await Promise.resolve();
        assert.equal(settled, false, 'the write waits for its group');
        await pending;
        assert.deepEqual(pair.committedLabels(), ['direct']);
        assert.equal(pair.stats.members, membersBefore + 1);
      } finally {
        await pair.close();
      }
    });

    it('wait for a busy connection with a write marked returnBeforeCommit, then return it before its group commits', async () => {
      const pair = openPair();
      try {
        let letGo!: () => void;
        const holding = new Promise<void>((resolve) => (letGo = resolve));
        const transaction = pair.db.transaction().execute(async (tx) => {
          await (tx as unknown as Kysely<TestTables>).insertInto('items').values({ label: 'holder' }).execute();
          await holding;
        });
        await new Promise((resolve) => setImmediate(resolve));
        const claim = insertClaimLike(pair.db as never, { label: 'claim-waited' });
        letGo();
        await claim;
        assert.ok(!pair.committedLabels().includes('claim-waited'), 'not committed when the call returned');
        await transaction;
        const seen = await labelsLike(pair.db as never, { pattern: 'claim-%' });
        assert.deepEqual(seen.rows, [{ label: 'claim-waited' }]);
        assert.ok(pair.committedLabels().includes('claim-waited'), 'committed with the read that joined its group');
      } finally {
        await pair.close();
      }
    });

    it('return a write marked returnBeforeCommit before its group commits, visible at once to this connection', async () => {
      const pair = openPair();
      try {
        await insertClaimLike(pair.db as never, { label: 'claim-direct' });
        assert.deepEqual(pair.committedLabels(), [], 'not committed when the call returned');
        const seen = await labelsLike(pair.db as never, { pattern: 'claim-%' });
        assert.deepEqual(seen.rows, [{ label: 'claim-direct' }], 'a read of this connection sees it (and waited for the commit)');
        assert.deepEqual(pair.committedLabels(), ['claim-direct'], 'the read joined the write group and returned once it committed');
      } finally {
        await pair.close();
      }
    });

    it('wait for a transaction in progress rather than run inside it', async () => {
      const pair = openPair();
      try {
        let resume!: () => void;
        const paused = new Promise<void>((resolve) => (resume = resolve));
        const transaction = pair.db.transaction().execute(async (tx) => {
          await tx.insertInto('items').values({ label: 'inside' }).execute();
          await paused; // the transaction holds the connection across this wait
          throw new Error('roll back inside');
        });
        const outcome = transaction.then(
          () => 'committed',
          (error: unknown) => String(error),
        );
        await new Promise((resolve) => setImmediate(resolve));
        const outside = insertItem(pair.db as never, { label: 'outside' });
        resume();
        assert.match(await outcome, /roll back inside/);
        await outside;
        assert.deepEqual(pair.committedLabels(), ['outside'], 'the statement ran after the transaction, not inside it');
      } finally {
        await pair.close();
      }
    });

    it('reject (not throw) when the statement fails, and leave the group to the others', async () => {
      const pair = openPair();
      try {
        await insertItem(pair.db as never, { label: 'twice' });
        const neighbour = insertItem(pair.db as never, { label: 'neighbour' });
        const second = insertItem(pair.db as never, { label: 'twice' });
        assert.ok(second instanceof Promise);
        await assert.rejects(second, /UNIQUE constraint failed/);
        await neighbour;
        assert.deepEqual(pair.committedLabels(), ['twice', 'neighbour']);
      } finally {
        await pair.close();
      }
    });
  });
});
