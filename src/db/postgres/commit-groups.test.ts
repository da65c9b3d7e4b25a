import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import pg from 'pg';
import { PostgresCommitGroups, type CommitGroupStats } from './commit-groups.js';
import { openDatabase } from '../database.js';
import { withQueryDeadline } from './query-deadline.js';
import { POSTGRES_URL, createPostgresSchema } from '../../../test/helpers/databases.js';
import { waitFor } from '../../../test/helpers/test-app.js';

const INSERT = 'INSERT INTO notes (id) VALUES ($1) RETURNING id';

/** Commit groups on a pool of a fresh schema, with a separate session that can see only what is committed. */
async function setUp(options: { maxGroupSize: number; maxGroups: number; stallMs: number }, statementTimeoutMs = 0) {
  const { schema, drop } = await createPostgresSchema();
  const timeout = statementTimeoutMs ? ` -c statement_timeout=${statementTimeoutMs}` : '';
  const pool = withQueryDeadline(new pg.Pool({ connectionString: POSTGRES_URL, max: 10, options: `-c search_path=${schema}${timeout}` }), statementTimeoutMs);
  // As the service's pool does (reportLostConnections): a connection ended by the server fails its queries, not the process.
  pool.on('connect', (client) => client.on('error', () => {}));
  pool.on('error', () => {});
  const observer = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path=${schema}` });
  await observer.connect();
  await observer.query('CREATE TABLE notes (id text PRIMARY KEY)');
  await observer.query('CREATE TABLE deferred_notes (id text, UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)');
  const stats: CommitGroupStats = { commits: 0, members: 0, alone: 0, retriedAlone: 0 };
  const groups = new PostgresCommitGroups(pool, { ...options, stats });
  const committed = async (ids: string[]) => (await observer.query<{ id: string }>('SELECT id FROM notes WHERE id = ANY($1) ORDER BY id', [ids])).rows.map((row) => row.id);
  return {
    groups,
    stats,
    observer,
    committed,
    async close() {
      await observer.end();
      await pool.end();
      await drop();
    },
  };
}

/** A lock the observer holds; a statement taking it waits until the observer lets go. */
async function holdLock(observer: pg.Client): Promise<{ statement: string; release: () => Promise<void>; waitedOn: () => Promise<boolean> }> {
  const key = randomInt(1, 2 ** 31);
  await observer.query('SELECT pg_advisory_lock($1)', [key]);
  return {
    statement: `SELECT pg_advisory_xact_lock(${key})`,
    release: async () => void (await observer.query('SELECT pg_advisory_unlock($1)', [key])),
    waitedOn: async () => (await observer.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted", [key])).rowCount === 1,
  };
}

describe('PostgreSQL commit groups', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, () => {
  let setup: Awaited<ReturnType<typeof setUp>>;
  before(async () => {
    setup = await setUp({ maxGroupSize: 64, maxGroups: 5, stallMs: 60_000 });
  });
  after(async () => {
    await setup?.close();
  });

  it('runs a write alone when nothing is running, and the writes arriving meanwhile as one group', async () => {
    const { groups, stats, committed } = setup;
    const ids = Array.from({ length: 40 }, (_, i) => `grouped-${i}`);
    const results = await Promise.all(ids.map((id) => groups.run<{ id: string }>(INSERT, [id])));
    assert.deepEqual(
      results.map((result) => result.rows[0]?.id),
      ids,
      'each caller gets the result of its own statement',
    );
    assert.deepEqual(await committed(ids), [...ids].sort());
    assert.deepEqual({ ...stats }, { commits: 1, members: 39, alone: 1, retriedAlone: 0 });
  });

  it('answers no write of a group before the group commits', async () => {
    const { groups, observer, committed } = setup;
    const lock = await holdLock(observer);
    const answered = new Set<string>();
    const track = (id: string, statement = INSERT, values: unknown[] = [id]) => groups.run(statement, values).then(() => answered.add(id));
    // The first write runs alone; the ones sent meanwhile wait for it, then run as one group: two
    // inserts, a statement that waits for the lock, one more insert.
    const first = groups.run(INSERT, ['held-first']);
    const group = [track('held-a'), track('held-b'), track('held-lock', lock.statement, []), track('held-c')];
    await first;
    await waitFor(lock.waitedOn, 10_000, 'the group to wait on the lock');
    assert.deepEqual([...answered], [], 'nobody is answered while the group is open');
    assert.deepEqual(await committed(['held-a', 'held-b']), [], 'the written rows are not committed yet');
    await lock.release();
    await Promise.all(group);
    assert.deepEqual([...answered].sort(), ['held-a', 'held-b', 'held-c', 'held-lock']);
    assert.deepEqual(await committed(['held-a', 'held-b', 'held-c']), ['held-a', 'held-b', 'held-c']);
  });

  it('fails every write of a group whose connection is lost, and commits none of them', async () => {
    const { groups, observer, committed } = setup;
    const lock = await holdLock(observer);
    const first = groups.run(INSERT, ['lost-first']);
    const group = Promise.allSettled([groups.run(INSERT, ['lost-a']), groups.run(lock.statement, []), groups.run(INSERT, ['lost-b'])]);
    await first;
    await waitFor(lock.waitedOn, 10_000, 'the group to wait on the lock');
    await observer.query("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND pid <> pg_backend_pid()");
    const outcomes = await group;
    assert.deepEqual(
      outcomes.map((outcome) => outcome.status),
      ['rejected', 'rejected', 'rejected'],
    );
    await lock.release();
    assert.deepEqual(await committed(['lost-a', 'lost-b']), []);
    // The pool dropped the dead connection: the next writes go through.
    assert.equal((await groups.run<{ id: string }>(INSERT, ['lost-after'])).rows[0]?.id, 'lost-after');
  });

  it('fails only the write whose statement failed; the rest of its group is written', async () => {
    const { groups, stats, committed } = setup;
    const retriedBefore = stats.retriedAlone;
    const ids = ['failing-0', 'failing-1', 'failing-dup', 'failing-2', 'failing-dup', 'failing-3'];
    const outcomes = await Promise.allSettled([groups.run(INSERT, ['failing-first']), ...ids.map((id) => groups.run(INSERT, [id]))]);
    const refused = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    assert.equal(refused.length, 1, 'one of the two copies is refused');
    assert.equal((refused[0]!.reason as { code?: string }).code, '23505');
    assert.deepEqual(await committed(ids), ['failing-0', 'failing-1', 'failing-2', 'failing-3', 'failing-dup']);
    assert.equal(stats.retriedAlone - retriedBefore, ids.length, 'the failed group ran again, each write on its own');
  });

  it('runs each write again on its own when the server refuses the COMMIT', async () => {
    const { groups, observer } = setup;
    const insert = 'INSERT INTO deferred_notes (id) VALUES ($1)';
    const ids = ['deferred-0', 'deferred-dup', 'deferred-1', 'deferred-dup'];
    const outcomes = await Promise.allSettled([groups.run(insert, ['deferred-first']), ...ids.map((id) => groups.run(insert, [id]))]);
    // The deferred check refused the group at COMMIT; run again on their own, one copy of the two fails.
    const refused = outcomes.flatMap((outcome, i) => (outcome.status === 'rejected' ? [i] : []));
    assert.equal(refused.length, 1);
    assert.ok([2, 4].includes(refused[0]!), `the write refused is a copy (${refused[0]})`);
    const rows = await observer.query<{ id: string }>('SELECT id FROM deferred_notes ORDER BY id');
    assert.deepEqual(
      rows.rows.map((row) => row.id),
      ['deferred-0', 'deferred-1', 'deferred-dup', 'deferred-first'],
    );
  });
});

describe('PostgreSQL commit groups beside each other', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, () => {
  it('starts another group beside a stalled one: a write waiting on a lock holds up no other', async () => {
    const setup = await setUp({ maxGroupSize: 64, maxGroups: 2, stallMs: 50 });
    try {
      const { groups, observer, committed } = setup;
      const lock = await holdLock(observer);
      const stuck = groups.run(lock.statement, []);
      await waitFor(lock.waitedOn, 10_000, 'the first write to wait on the lock');
      const ids = ['unstalled-0', 'unstalled-1', 'unstalled-2'];
      // Fewer than a whole group: they start once the held write has run for stallMs, and commit while it waits.
      await Promise.all(ids.map((id) => groups.run(INSERT, [id])));
      assert.deepEqual(await committed(ids), ids);
      assert.equal(await lock.waitedOn(), true, 'the first write is still waiting');
      await lock.release();
      await stuck;
    } finally {
      await setup.close();
    }
  });

  it('gives each statement of a pipelined group the query deadline from when the one before it is answered', async () => {
    // statement_timeout 1 s: the deadline on this side is 3 s per statement; five 0.8 s statements take 4 s in all.
    const setup = await setUp({ maxGroupSize: 64, maxGroups: 2, stallMs: 60_000 }, 1000);
    try {
      const { groups, stats } = setup;
      const outcomes = await Promise.allSettled([groups.run(INSERT, ['slow-first']), ...Array.from({ length: 5 }, () => groups.run('SELECT pg_sleep(0.8)', []))]);
      assert.deepEqual(
        outcomes.map((outcome) => outcome.status),
        Array(6).fill('fulfilled'),
      );
      assert.deepEqual({ commits: stats.commits, members: stats.members }, { commits: 1, members: 5 });
    } finally {
      await setup.close();
    }
  });

  it('starts another group beside a running one when a whole group is waiting', async () => {
    const setup = await setUp({ maxGroupSize: 4, maxGroups: 2, stallMs: 60_000 });
    try {
      const { groups, stats, observer, committed } = setup;
      const lock = await holdLock(observer);
      const stuck = groups.run(lock.statement, []);
      await waitFor(lock.waitedOn, 10_000, 'the first write to wait on the lock');
      const ids = ['beside-0', 'beside-1', 'beside-2', 'beside-3'];
      // Four waiting make a whole group: it runs and commits while the first is still held.
      await Promise.all(ids.map((id) => groups.run(INSERT, [id])));
      assert.deepEqual(await committed(ids), ids);
      assert.deepEqual({ commits: stats.commits, members: stats.members }, { commits: 1, members: 4 });
      await lock.release();
      await stuck;
    } finally {
      await setup.close();
    }
  });

  it('gives a PostgreSQL database commit groups for its one-statement writes', async () => {
    const { schema, drop } = await createPostgresSchema();
    const database = openDatabase({ url: POSTGRES_URL!, schema });
    try {
      assert.ok(database.oneStatementWrites instanceof PostgresCommitGroups);
    } finally {
      await database.close();
      await drop();
    }
  });
});
