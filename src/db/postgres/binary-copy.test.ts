import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { copyRowPiecesOut, parseBinaryCopyPieces } from './binary-copy.js';
import { QUERY_DEADLINE_GRACE_MS, withQueryDeadline } from './query-deadline.js';
import { POSTGRES_URL } from '../../../test/helpers/databases.js';
import { startTcpProxy } from '../../../test/helpers/tcp-proxy.js';

/** Each field's slices joined: what the rows hold, for comparing. */
const joined = (rows: (Buffer[] | null)[][]) => rows.map((row) => row.map((field) => field && Buffer.concat(field)));
const copyRowsOut = async (pool: pg.Pool, text: string) => joined(await copyRowPiecesOut(pool, text));

describe('rows read through a binary COPY', () => {
  it('refuses bytes that are not a binary COPY stream', () => {
    assert.throws(() => parseBinaryCopyPieces([Buffer.from('not a copy stream at all')]), /not a binary COPY stream/);
  });

  it('reads a stream split anywhere into pieces: each field as slices of them, joined the same bytes', () => {
    // Two rows of two fields (a 300-byte field, NULL; an empty one, 3 bytes), after a header with a 4-byte extension.
    const field = (bytes: Buffer | null) => (bytes === null ? int32(-1) : Buffer.concat([int32(bytes.length), bytes]));
    const int16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
    const int32 = (n: number) => { const b = Buffer.alloc(4); b.writeInt32BE(n); return b; };
    const long = Buffer.from(Array.from({ length: 300 }, (_, i) => i % 251));
    const stream = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), int32(0), int32(4), Buffer.from('ext!'), int16(2), field(long), field(null), int16(2), field(Buffer.alloc(0)), field(Buffer.from('abc')), int16(-1)]);
    const expected = [[long, null], [Buffer.alloc(0), Buffer.from('abc')]];
    assert.deepEqual(joined(parseBinaryCopyPieces([stream])), expected);
    for (const size of [1, 2, 3, 5, 7, 19, 64, 301]) {
      const pieces = Array.from({ length: Math.ceil(stream.length / size) }, (_, i) => stream.subarray(i * size, (i + 1) * size));
      const rows = parseBinaryCopyPieces(pieces);
      assert.deepEqual(joined(rows), expected, `pieces of ${size} bytes`);
      // Slices, not copies: the long field's first slice is the stream's own memory (not merely the
      // same pooled ArrayBuffer, which a small copy would share too).
      const slice = rows[0]![0]![0]!;
      assert.equal(slice.buffer, stream.buffer);
      assert.ok(slice.byteOffset >= stream.byteOffset && slice.byteOffset + slice.length <= stream.byteOffset + stream.length, 'inside the stream');
    }
    assert.throws(() => parseBinaryCopyPieces([stream.subarray(0, 40)]), /ended mid-field/);
  });

  it('reads bytea fields as their bytes, and NULL as null', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    try {
      const rows = await copyRowsOut(pool, `SELECT '\\x00ff10'::bytea, NULL::bytea UNION ALL SELECT ''::bytea, '\\x7f'::bytea`);
      assert.deepEqual(rows, [[Buffer.from([0, 255, 16]), null], [Buffer.alloc(0), Buffer.from([127])]]);
      // A field larger than one socket read comes back in several pieces, the same bytes in order.
      const pieces = (await copyRowPiecesOut(pool, `SELECT decode(repeat('00ff7f10', 300000), 'hex')`))[0]?.[0];
      assert.ok(pieces && pieces.length > 1, `${pieces?.length} piece(s)`);
      assert.deepEqual(Buffer.concat(pieces!), Buffer.from('00ff7f10'.repeat(300000), 'hex'));
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
