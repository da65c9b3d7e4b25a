import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect, sql, type Transaction } from 'kysely';
import { executeInTransaction, GroupCommitSqliteDialect, returnBeforeCommit, type GroupCommitStats } from './sqlite-group-commit.js';
import { preparedQuery } from './prepared.js';

import type { Generated } from 'kysely';

interface TestTables {
  items: { id: Generated<number>; label: string };
  parents: { id: number };
  children: { id: number; parent_id: number };
}

/** A real SQLite file in WAL mode, the service's settings, and a second connection to look from outside. */
function openPair(options: { maxGroupSize?: number } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'wo-group-commit-'));
  const file = path.join(dir, 'test.sqlite');
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL UNIQUE);
               CREATE TABLE parents (id INTEGER PRIMARY KEY);
               CREATE TABLE children (id INTEGER PRIMARY KEY,
                 parent_id INTEGER NOT NULL REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)`);
  const stats: GroupCommitStats = { commits: 0, members: 0, failures: 0 };
  const db = new Kysely<TestTables>({ dialect: new GroupCommitSqliteDialect(sqlite, { stats, ...options }) });
  const observer = new SqliteDatabase(file, { readonly: true });
  const committedLabels = () => (observer.prepare('SELECT label FROM items ORDER BY id').all() as { label: string }[]).map((r) => r.label);
  return {
    db,
    sqlite,
    file,
    stats,
    committedLabels,
    async close() {
      observer.close();
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function insertInTransaction(db: Kysely<TestTables>, label: string, fail = false) {
  return db.transaction().execute(async (tx) => {
    await tx.insertInto('items').values({ label }).execute();
    if (fail) throw new Error(`rolled back ${label}`);
    return label;
  });
}

describe('SQLite group commit', () => {
  let pair: ReturnType<typeof openPair>;
  before(() => {
    pair = openPair();
  });
  after(async () => {
    await pair.close();
  });

  it('commits concurrent transactions together, and each caller returns only once its write is committed', async () => {
    const commitsBefore = pair.stats.commits;
    const labels = Array.from({ length: 40 }, (_, i) => `together-${i}`);
    const seenAtReturn = await Promise.all(
      labels.map(async (label) => {
        await insertInTransaction(pair.db, label);
        // Read from another connection at the moment the transaction reports success.
        return pair.committedLabels().includes(label);
      }),
    );
    assert.ok(seenAtReturn.every(Boolean), 'every transaction was visible to another connection when it returned');
    const commits = pair.stats.commits - commitsBefore;
    assert.ok(commits >= 1 && commits < labels.length / 4, `40 concurrent transactions took ${commits} commits`);
  });

  it('rolls back only the transaction that failed, not the others in its group', async () => {
    const results = await Promise.allSettled([
      insertInTransaction(pair.db, 'kept-1'),
      insertInTransaction(pair.db, 'dropped', true),
      insertInTransaction(pair.db, 'kept-2'),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    const labels = pair.committedLabels();
    assert.ok(labels.includes('kept-1') && labels.includes('kept-2'));
    assert.ok(!labels.includes('dropped'));
  });

  it('lets a statement fail (a unique violation) without harming the group around it', async () => {
    await insertInTransaction(pair.db, 'unique-once');
    const results = await Promise.allSettled([
      insertInTransaction(pair.db, 'unique-neighbour-1'),
      pair.db.insertInto('items').values({ label: 'unique-once' }).execute(),
      insertInTransaction(pair.db, 'unique-neighbour-2'),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.match(String((results[1] as PromiseRejectedResult).reason), /UNIQUE/);
    const labels = pair.committedLabels();
    assert.ok(labels.includes('unique-neighbour-1') && labels.includes('unique-neighbour-2'));
  });

  it('makes a single write outside a transaction wait for its commit too', async () => {
    await pair.db.insertInto('items').values({ label: 'single' }).execute();
    assert.ok(pair.committedLabels().includes('single'));
  });

  it('returns a write marked returnBeforeCommit before its group commits, and commits it with the next awaited one', async () => {
    const marked = returnBeforeCommit(pair.db.insertInto('items').values({ label: 'claim-like' }).compile());
    await pair.db.executeQuery(marked);
    assert.ok(!pair.committedLabels().includes('claim-like'), 'not committed yet when the call returned');
    const seen = await pair.db.transaction().execute(async (tx) => tx.selectFrom('items').select('label').where('label', '=', 'claim-like').execute());
    assert.equal(seen.length, 1, 'this connection sees it at once');
    await insertInTransaction(pair.db, 'follows-claim');
    const labels = pair.committedLabels();
    assert.ok(labels.includes('claim-like') && labels.includes('follows-claim'), 'the awaited transaction committed it too');
  });

  it('fails every member of a group whose commit fails, and keeps none of their writes', async () => {
    // A deferred foreign key is checked at COMMIT: the one way to make a commit itself fail on demand.
    const failuresBefore = pair.stats.failures;
    const results = await Promise.allSettled([
      insertInTransaction(pair.db, 'doomed-neighbour-1'),
      pair.db.transaction().execute(async (tx) => {
        await tx.insertInto('children').values({ id: 1, parent_id: 999 }).execute();
      }),
      insertInTransaction(pair.db, 'doomed-neighbour-2'),
    ]);
    assert.ok(
      results.every((r) => r.status === 'rejected'),
      'no member of the failed group is reported as committed',
    );
    assert.match(String((results[1] as PromiseRejectedResult).reason), /FOREIGN KEY/);
    assert.equal(pair.stats.failures, failuresBefore + 1);
    const labels = pair.committedLabels();
    assert.ok(!labels.includes('doomed-neighbour-1') && !labels.includes('doomed-neighbour-2'));
    // The connection is usable afterwards.
    await insertInTransaction(pair.db, 'after-failure');
    assert.ok(pair.committedLabels().includes('after-failure'));
  });

  it('runs a PRAGMA on its own, after committing the open group', async () => {
    const [, pragma] = await Promise.all([insertInTransaction(pair.db, 'before-pragma'), sql<{ foreign_keys: number }>`PRAGMA foreign_keys`.execute(pair.db)]);
    assert.equal(pragma.rows[0]?.foreign_keys, 1, 'the pragma ran outside a transaction (inside one it is ignored)');
    assert.ok(pair.committedLabels().includes('before-pragma'));
  });

  it('reads its own group’s writes inside later transactions', async () => {
    const [, count] = await Promise.all([
      insertInTransaction(pair.db, 'read-back'),
      pair.db.transaction().execute(async (tx) => tx.selectFrom('items').select('id').where('label', '=', 'read-back').execute()),
    ]);
    assert.equal(count.length, 1);
  });
});

describe('SQLite group commit: reads outside a transaction', () => {
  let pair: ReturnType<typeof openPair>;
  let outsider: SqliteDatabase.Database;
  before(() => {
    pair = openPair();
    // Another process's connection: it must never have to wait for our reads.
    outsider = new SqliteDatabase(pair.file);
    outsider.pragma('busy_timeout = 0');
  });
  after(async () => {
    outsider.close();
    await pair.close();
  });
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  const labels = async () => (await pair.db.selectFrom('items').select('label').execute()).map((row) => row.label);

  it('share one read transaction per turn, which commits nothing and ends with the turn', async () => {
    await nextTurn();
    const commitsBefore = pair.stats.commits;
    await Promise.all([labels(), labels(), labels()]);
    assert.equal(pair.sqlite.inTransaction, true, 'the turn’s reads ran in one open read transaction');
    await nextTurn();
    assert.equal(pair.sqlite.inTransaction, false, 'it ended with the turn');
    assert.equal(pair.stats.commits, commitsBefore, 'a read group is not counted as a commit');
  });

  it('never block another process’s write, and see it from the next turn on', async () => {
    await nextTurn();
    assert.ok(!(await labels()).includes('outside-1'));
    // The read group holds a snapshot: WAL lets another connection write meanwhile (busy_timeout 0).
    outsider.prepare('INSERT INTO items (label) VALUES (?)').run('outside-1');
    assert.ok(!(await labels()).includes('outside-1'), 'reads of the same turn share the earlier snapshot');
    await nextTurn();
    assert.ok((await labels()).includes('outside-1'), 'the next turn reads afresh');
  });

  it('end before a write, which commits in its own group even after another process wrote', async () => {
    await nextTurn();
    await labels(); // a read group with an old snapshot is open
    outsider.prepare('INSERT INTO items (label) VALUES (?)').run('outside-2');
    // Upgrading that read transaction to a writer would fail (SQLITE_BUSY_SNAPSHOT); a new group does not.
    const commitsBefore = pair.stats.commits;
    await insertInTransaction(pair.db, 'after-read');
    assert.equal(pair.stats.commits, commitsBefore + 1);
    assert.ok(pair.committedLabels().includes('after-read'));
  });

  it('wait for the commit when they join a group that holds writes', async () => {
    await nextTurn();
    const write = insertInTransaction(pair.db, 'written-then-read');
    const read = pair.db
      .selectFrom('items')
      .select('label')
      .where('label', '=', 'written-then-read')
      .execute()
      .then((rows) => ({ rows, committedWhenReturned: pair.committedLabels().includes('written-then-read') }));
    const [{ rows, committedWhenReturned }] = await Promise.all([read, write]);
    assert.equal(rows.length, 1, 'the read ran in the write’s group and saw it');
    assert.ok(committedWhenReturned, 'and returned only once it was committed');
  });
});

describe('SQLite group commit: group size', () => {
  it('commits a full group at maxGroupSize even within one turn of the event loop', async () => {
    const pair = openPair({ maxGroupSize: 10 });
    try {
      await Promise.all(Array.from({ length: 45 }, (_, i) => insertInTransaction(pair.db, `bounded-${i}`)));
      assert.ok(pair.stats.commits >= 5, `45 transactions in groups of at most 10 took ${pair.stats.commits} commits`);
      assert.equal(pair.stats.members, 45);
      assert.equal(pair.committedLabels().length, 45);
    } finally {
      await pair.close();
    }
  });

  it('commits what is pending when the database is closed', async () => {
    const pair = openPair();
    let inserted!: () => void;
    const insertDone = new Promise<void>((resolve) => (inserted = resolve));
    const pending = pair.db.transaction().execute(async (tx) => {
      await tx.insertInto('items').values({ label: 'at-close' }).execute();
      inserted();
      return 'at-close';
    });
    await insertDone; // the transaction is under way (its commit is what close must not lose)
    await pair.db.destroy();
    assert.equal(await pending, 'at-close');
    const reopened = new SqliteDatabase(pair.file, { readonly: true });
    try {
      assert.equal((reopened.prepare("SELECT count(*) AS n FROM items WHERE label = 'at-close'").get() as { n: number }).n, 1);
    } finally {
      reopened.close();
      rmSync(path.dirname(pair.file), { recursive: true, force: true });
    }
  });

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
          assert.equal(executeInTransaction(tx.getExecutor(), CompiledQuery.raw('SELECT 1')), undefined);
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
