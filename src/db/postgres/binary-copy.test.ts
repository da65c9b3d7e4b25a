import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { copyRowsOut, parseBinaryCopy } from './binary-copy.js';
import { QUERY_DEADLINE_GRACE_MS, withQueryDeadline } from './query-deadline.js';
import { POSTGRES_URL } from '../../../test/helpers/databases.js';
import { startTcpProxy } from '../../../test/helpers/tcp-proxy.js';

describe('rows read through a binary COPY', () => {
  it('refuses bytes that are not a binary COPY stream', () => {
    assert.throws(() => parseBinaryCopy(Buffer.from('not a copy stream at all')), /not a binary COPY stream/);
  });

  it('reads bytea fields as their bytes, and NULL as null', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    try {
      const rows = await copyRowsOut(pool, `SELECT '\\x00ff10'::bytea, NULL::bytea UNION ALL SELECT ''::bytea, '\\x7f'::bytea`);
      assert.deepEqual(rows, [[Buffer.from([0, 255, 16]), null], [Buffer.alloc(0), Buffer.from([127])]]);
    } finally {
      await pool.end();
    }
  });

  it('gives up on a COPY the server stops answering, at the query deadline, and the pool drops that connection', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, async () => {
    const target = new URL(POSTGRES_URL!);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const throughProxy = new URL(POSTGRES_URL!);
    throughProxy.port = String(proxy.port);
    const statementTimeoutMs = 300;
    const pool = withQueryDeadline(new pg.Pool({ connectionString: throughProxy.toString(), max: 1, options: `-c statement_timeout=${statementTimeoutMs}` }), statementTimeoutMs);
    pool.on('connect', (client) => client.on('error', () => {}));
    pool.on('error', () => {});
    try {
      assert.equal((await copyRowsOut(pool, `SELECT 'ok'::bytea`))[0]![0]!.toString(), 'ok');
      proxy.stall();
      const started = Date.now();
      await assert.rejects(copyRowsOut(pool, `SELECT 'stalled'::bytea`), /the database did not answer within/);
      const ms = Date.now() - started;
      assert.ok(ms >= statementTimeoutMs + QUERY_DEADLINE_GRACE_MS - 50 && ms < 6_000, `given up at the deadline (${ms} ms)`);
      proxy.unstall();
      // The stalled connection was dropped: the pool's one slot opens a new one, which answers.
      assert.equal((await copyRowsOut(pool, `SELECT 'again'::bytea`))[0]![0]!.toString(), 'again');
      assert.equal(pool.totalCount, 1);
    } finally {
      proxy.unstall();
      await pool.end();
      await proxy.close();
    }
  });
});
