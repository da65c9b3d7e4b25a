import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { fastPathOf } from './fast-path.js';
import { openPair, type TestTables } from '../../../test/helpers/group-commit-pair.js';

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
    const write = pair.db.insertInto('items').values({ label: 'claim-like' }).compile();
    await fastPathOf(pair.db.getExecutor())!.execute(pair.db as never, write.sql, [...write.parameters], { returnBeforeCommit: true });
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

  it('run a read-only transaction in the read group, one snapshot, taking no write lock and committing nothing', async () => {
    await nextTurn();
    const commitsBefore = pair.stats.commits;
    const seen = await pair.db
      .transaction()
      .setAccessMode('read only')
      .execute(async (tx) => {
        const first = await tx.selectFrom('items').select('label').execute();
        // Another process writes in between: with no write lock taken it is not blocked (busy_timeout 0),
        // and the transaction's snapshot does not see it.
        outsider.prepare('INSERT INTO items (label) VALUES (?)').run('outside-3');
        const second = await tx.selectFrom('items').select('label').execute();
        return { first: first.length, second: second.length };
      });
    assert.equal(seen.second, seen.first, 'both reads saw one snapshot');
    assert.equal(pair.stats.commits, commitsBefore, 'nothing was committed for it');
    await nextTurn();
    assert.ok((await labels()).includes('outside-3'));
  });

  it('run a read-only transaction inside an open write group, returning once that group is committed', async () => {
    await nextTurn();
    const write = insertInTransaction(pair.db, 'written-then-read-only');
    const read = pair.db
      .transaction()
      .setAccessMode('read only')
      .execute((tx) => tx.selectFrom('items').select('label').where('label', '=', 'written-then-read-only').execute())
      .then((rows) => ({ rows, committedWhenReturned: pair.committedLabels().includes('written-then-read-only') }));
    const [{ rows, committedWhenReturned }] = await Promise.all([read, write]);
    assert.equal(rows.length, 1, 'it read inside the write’s group and saw it');
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
});
