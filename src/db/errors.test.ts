import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { AppError } from '../errors.js';
import { createPostgresDatabase } from '../../test/helpers/databases.js';
import { DatabaseUnavailableError, databaseUnavailable, startFailure, unavailableCause } from './errors.js';
import { openPostgresDatabase } from './postgres/open-postgres.js';

const POSTGRES_URL = process.env.WO_TEST_DATABASE_URL;

/** The error `work` rejects with (real driver errors, not look-alikes). */
async function failure(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

/** A server that accepts connections and never answers: a database host gone silent. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('reading driver errors for "the database cannot serve now"', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wo-db-errors-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a refused connection as unreachable, and turns it into a 503 `unavailable` with Retry-After', async () => {
    const silent = await silentServer();
    const port = silent.port;
    await silent.close();
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres' });
    const error = await failure(() => client.connect());
    assert.equal(unavailableCause(error), 'database_unreachable');
    const domain = databaseUnavailable(error)!;
    assert.ok(domain instanceof AppError);
    assert.equal(domain.status, 503);
    assert.equal(domain.code, 'unavailable');
    assert.deepEqual(domain.extra.headers, { 'retry-after': '5' });
    assert.equal(domain.cause, error);
  });

  it('reads a connection that does not open in time as unreachable, and a wait for a busy pool as pool exhaustion', async () => {
    const silent = await silentServer();
    const pool = new pg.Pool({ host: '127.0.0.1', port: silent.port, user: 'postgres', max: 1, connectionTimeoutMillis: 150 });
    try {
      const [opening, waiting] = await Promise.all([failure(() => pool.connect()), failure(() => pool.connect())]);
      assert.equal(unavailableCause(opening), 'database_unreachable', String(opening));
      assert.equal(unavailableCause(waiting), 'pool_exhausted', String(waiting));
    } finally {
      await pool.end();
      await silent.close();
    }
  });

  it('reads SQLite’s busy, full-disk and I/O errors and a missing table, and not a constraint or a syntax error', async () => {
    const file = path.join(dir, 'busy.sqlite');
    const holder = new SqliteDatabase(file);
    holder.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    const other = new SqliteDatabase(file, { timeout: 0 });
    holder.exec('BEGIN IMMEDIATE');
    const busy = await failure(async () => other.exec('BEGIN IMMEDIATE'));
    holder.exec('ROLLBACK');
    assert.equal(unavailableCause(busy), 'database_busy', String(busy));

    // A database that may not grow is a full disk as SQLite reports it.
    other.pragma(`max_page_count = ${other.pragma('page_count', { simple: true })}`);
    const full = await failure(async () => other.prepare('INSERT INTO t (v) VALUES (?)').run('x'.repeat(100_000)));
    assert.equal(unavailableCause(full), 'storage_failed', String(full));

    holder.exec("INSERT INTO t (id, v) VALUES (1, 'a')");
    assert.equal(unavailableCause(await failure(async () => holder.exec("INSERT INTO t (id, v) VALUES (1, 'b')"))), undefined);
    assert.equal(unavailableCause(await failure(async () => holder.exec('SELEC 1'))), undefined);
    assert.equal(unavailableCause(await failure(async () => holder.exec('SELECT * FROM no_such_table'))), 'schema_missing');
    assert.equal(unavailableCause(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' })), 'storage_failed');
    holder.close();
    other.close();
  });

  it('reads SQLite’s read-only database and a file it cannot open as storage that fails, not as a fault of the statement', async () => {
    const file = path.join(dir, 'readonly.sqlite');
    new SqliteDatabase(file).exec('CREATE TABLE t (v TEXT)');
    const reader = new SqliteDatabase(file, { readonly: true });
    const readonly = await failure(async () => reader.prepare('INSERT INTO t (v) VALUES (?)').run('x'));
    assert.equal((readonly as { code?: string }).code, 'SQLITE_READONLY');
    assert.equal(unavailableCause(readonly), 'storage_failed');
    assert.equal(databaseUnavailable(readonly)?.status, 503);
    reader.close();
    // A directory where the database file should be: SQLite cannot open it.
    const cannotOpen = await failure(async () => new SqliteDatabase(dir));
    assert.equal((cannotOpen as { code?: string }).code, 'SQLITE_CANTOPEN');
    assert.equal(unavailableCause(cannotOpen), 'storage_failed');
  });

  it('reads PostgreSQL’s statement timeout, a session ended by the administrator and a missing table, and not an error in the statement', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, async () => {
    const victim = new pg.Client({ connectionString: POSTGRES_URL, statement_timeout: 50 });
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await Promise.all([victim.connect(), admin.connect()]);
    // An ended session's client reports the error as an event too; the test only reads it.
    victim.on('error', () => {});
    try {
      assert.equal(unavailableCause(await failure(() => victim.query('SELECT pg_sleep(1)'))), 'statement_timeout');
      assert.equal(unavailableCause(await failure(() => victim.query('SELECT 1 FROM no_such_table'))), 'schema_missing');
      assert.equal(unavailableCause(await failure(() => victim.query('SELECT 1 / 0'))), undefined);
      // The same SQLSTATE for a wrong alias: a fault of the statement, not a schema to migrate.
      const alias = await failure(() => victim.query('SELECT x.n FROM (SELECT 1 AS n) AS y'));
      assert.equal((alias as { code?: string }).code, '42P01');
      assert.equal(unavailableCause(alias), undefined);
      const pid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const ended = failure(() => victim.query('SELECT pg_sleep(5)'));
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      const error = await ended;
      assert.equal((error as { code?: string }).code, '57P01');
      assert.equal(unavailableCause(error), 'database_unreachable');
      assert.equal(unavailableCause(await failure(() => victim.query('SELECT 1'))), 'database_unreachable', 'the client of the ended session');
    } finally {
      await admin.end();
      await victim.end().catch(() => undefined);
    }
  });

  describe('a connection PostgreSQL refuses, read by where it failed (opening a connection) rather than by its code', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, () => {
    /** What a query through a pool of the service (openPostgresDatabase) on `url` fails with. */
    async function queryFailure(url: string): Promise<unknown> {
      const database = openPostgresDatabase(url, { poolSize: 1, poolWaitMs: 2000 });
      try {
        return await failure(() => database.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute());
      } finally {
        await database.close();
      }
    }
    const urlWith = (change: (url: URL) => void) => {
      const url = new URL(POSTGRES_URL!);
      change(url);
      return url.toString();
    };

    it('answers 503 for a database that does not accept connections, one that does not exist, a role that does not exist and a closed port', async () => {
      const own = await createPostgresDatabase('wo_refusing');
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      const closed = await silentServer();
      await closed.close();
      try {
        await admin.query(`ALTER DATABASE ${new URL(own.url).pathname.slice(1)} ALLOW_CONNECTIONS false`);
        const cases: [string, string, string | undefined][] = [
          [own.url, 'connection_refused', '55000'],
          [urlWith((url) => (url.pathname = '/wo_no_such_database')), 'connection_refused', '3D000'],
          [urlWith((url) => (url.username = 'wo_no_such_role')), 'connection_refused', '28000'],
          [urlWith((url) => (url.port = String(closed.port))), 'database_unreachable', 'ECONNREFUSED'],
        ];
        for (const [url, cause, code] of cases) {
          const error = await queryFailure(url);
          assert.ok(error instanceof DatabaseUnavailableError, String(error));
          assert.equal(error.unavailableCause, cause);
          assert.equal(error.status, 503);
          assert.deepEqual(error.extra.headers, { 'retry-after': '5' });
          assert.equal((error.cause as { code?: string }).code, code);
        }
        // At start, a database or a role that does not exist is still a wrong DATABASE_URL, said as such.
        assert.deepEqual(startFailure(await queryFailure(cases[1]![0])), { message: 'configuration error: DATABASE_URL: database "wo_no_such_database" does not exist', configuration: true });
        assert.equal(startFailure(await queryFailure(own.url))?.configuration, false);
      } finally {
        await admin.end();
        await own.drop();
      }
    });

    it('answers 503 for a table the service’s role may not use (its privileges revoked, or the role dropped under an open session)', async () => {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      const role = `wo_denied_${Math.random().toString(36).slice(2, 10)}`;
      try {
        await client.query('BEGIN');
        await client.query('CREATE TEMPORARY TABLE denied (v int)');
        await client.query(`CREATE ROLE ${role}`);
        await client.query(`SET LOCAL ROLE ${role}`);
        const denied = await failure(() => client.query('SELECT v FROM denied'));
        assert.equal((denied as { code?: string }).code, '42501');
        assert.equal(unavailableCause(denied), 'access_denied');
      } finally {
        await client.query('ROLLBACK');
        await client.end();
      }
    });
  });
});
