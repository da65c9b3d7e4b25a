import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContext, type AppContext } from '../../src/context.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { POSTGRES_URL, createPostgresSchema, withSchemaChangeLock } from '../helpers/databases.js';
import { createWorkOrder, itOnEachDatabase, startTestApp, waitFor } from '../helpers/test-app.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { migrations } from '../../src/db/migrations/index.js';
import { DEFAULT_MIGRATION_TABLE, sql } from 'kysely';

function assertUnavailable(response: LightMyRequestResponse, retryAfter?: string) {
  assert.equal(response.statusCode, 503, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  assert.equal(response.json().code, 'unavailable');
  assert.match(String(response.headers['retry-after']), /^\d+$/);
  if (retryAfter) assert.equal(response.headers['retry-after'], retryAfter);
  return response.json() as { detail: string };
}

/** A logger whose JSON lines the test reads. */
function capturedLogger() {
  const lines: Array<{ level: number; msg: string; cause?: string; suppressed?: number }> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

/**
 * A process (API and its context) on a fresh PostgreSQL schema reached through a TCP proxy the test
 * controls, with `env` on top; everything is closed and removed after `check`.
 */
async function withProxiedDatabase(
  env: Record<string, string>,
  check: (service: { app: FastifyInstance; context: AppContext; proxy: TcpProxy; lines: ReturnType<typeof capturedLogger>['lines'] }) => Promise<void>,
): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-proxied-'));
  const target = new URL(POSTGRES_URL!);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const throughProxy = new URL(POSTGRES_URL!);
  throughProxy.port = String(proxy.port);
  const schema = await createPostgresSchema();
  const { logger, lines } = capturedLogger();
  const config = loadConfig({ WO_DATA_DIR: dataDir, DATABASE_URL: throughProxy.toString(), ...env });
  const context = await withSchemaChangeLock(() => createContext(config, { logger, databaseSchema: schema.schema, createKeys: true }));
  const app = await buildApp(context);
  // Ready before any timing, as `serve` is before it listens: the first inject would otherwise compile
  // every route's schemas (3–5 s on a loaded 2-core machine) inside the deadlines these tests measure.
  await app.ready();
  try {
    await check({ app, context, proxy, lines });
  } finally {
    await app.close();
    await context.close();
    await proxy.close();
    await schema.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('when the database cannot serve, requests answer 503 unavailable with Retry-After, never 500', () => {
  // A process must reach its database at start (it checks its keys against the deployment's there);
  // the database going away afterwards is what this covers: a proxy in front of PostgreSQL is cut.
  it('answers 503 on every request and on /readyz while PostgreSQL cannot be reached, logging one line per cause', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, async () => {
    await withProxiedDatabase({}, async ({ app, proxy, lines }) => {
      await proxy.cut();
      const key = `wo_${'A'.repeat(44)}`;
      const answers = await Promise.all(
        Array.from({ length: 30 }, () => app.inject({ method: 'GET', url: '/api/v1/records', headers: { authorization: `Bearer ${key}` } })),
      );
      for (const answer of answers) assert.match(assertUnavailable(answer, '5').detail, /cannot be reached/);
      assertUnavailable(await app.inject({ method: 'GET', url: '/readyz' }), '5');
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'the process itself is alive');
      const refusals = lines.filter((line) => line.msg === 'request refused: service unavailable');
      assert.equal(refusals.length, 1, 'one line for 31 refusals of one cause');
      assert.equal(refusals[0]!.cause, 'database_unreachable');
      assert.ok(!lines.some((line) => line.level >= 50), 'nothing logged as an error');
      await proxy.restore();
      await waitFor(async () => (await app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200, 15_000, 'ready again once the database is back');
    });
  });

  // A server that stops answering without closing anything (frozen, or a middlebox keeping the TCP
  // connection up): statement_timeout never arrives, and TCP keeps the connection alive.
  it('gives up on a PostgreSQL server that stops answering: 503 after statement_timeout and a grace, /readyz 503 within 2 s, then recovers', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, async () => {
    // A pool of 4, all opened before the stall: each stalled idle one costs a later request its deadline.
    const env = { WO_DATABASE_STATEMENT_TIMEOUT_MS: '500', WO_DATABASE_POOL_WAIT_MS: '1000', WO_DATABASE_POOL_SIZE: '4' };
    await withProxiedDatabase(env, async ({ app, context, proxy }) => {
      const timed = async (request: InjectOptions) => {
        const started = Date.now();
        const response = await app.inject(request);
        return { response, ms: Date.now() - started };
      };
      // Connections in the pool, idle, for what follows to take: opened before the server stalls.
      await Promise.all(Array.from({ length: 4 }, () => context.database.db.selectFrom('organizations').select('id').execute()));
      proxy.stall();
      const key = `wo_${'A'.repeat(44)}`;
      const [request, readiness] = await Promise.all([
        timed({ method: 'GET', url: '/api/v1/records', headers: { authorization: `Bearer ${key}` } }),
        timed({ method: 'GET', url: '/readyz' }),
      ]);
      assert.match(assertUnavailable(request.response, '5').detail, /did not answer in time/);
      // Timers count from the event loop's cached time: a few ms early at most.
      assert.ok(request.ms >= 2_400, `given up only past statement_timeout and the grace (${request.ms} ms)`);
      assert.ok(request.ms < 6_000, `the request was answered after ${request.ms} ms`);
      assert.match(assertUnavailable(readiness.response, '5').detail, /did not answer within 2 s/);
      assert.ok(readiness.ms < 3_000, `/readyz was answered after ${readiness.ms} ms`);
      proxy.unstall();
      // A connection given up is dropped, not handed to the next request. Those stalled while idle
      // are noticed one by one, by the next request each is handed to (within its deadline).
      await waitFor(async () => (await app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200, 20_000, 'ready again once the database answers');
      const after = await app.inject({ method: 'GET', url: '/api/v1/records', headers: { authorization: `Bearer ${key}` } });
      assert.equal(after.statusCode, 401, after.body);
    });
  });

  // Database back but empty (restored from an old backup, or recreated): the process started on a
  // migrated schema, which has since lost its latest migration.
  itOnEachDatabase('is not ready while the schema is not migrated, and ready once it is', async ({ app, context }) => {
    const latest = migrations[migrations.length - 1]!.name;
    await sql`DELETE FROM ${sql.table(context.database.schema ? `${context.database.schema}.${DEFAULT_MIGRATION_TABLE}` : DEFAULT_MIGRATION_TABLE)} WHERE name = ${latest}`.execute(context.database.db);
    const notReady = assertUnavailable(await app.inject({ method: 'GET', url: '/readyz' }));
    assert.match(notReady.detail, /not migrated.*wo migrate/);
    await (context.database.dialect === 'postgres' ? withSchemaChangeLock(() => migrateToLatest(context.database)) : migrateToLatest(context.database));
    assert.deepEqual((await app.inject({ method: 'GET', url: '/readyz' })).json(), { status: 'ready', database: context.database.dialect });
  });

  // The same database emptied or replaced while the process runs (it checked the schema at start):
  // what was a table is gone, and every statement naming it fails until `wo migrate` has run.
  itOnEachDatabase('answers 503 (not 500) while a table of its schema is missing, and serves again once it is back', async ({ context, newTenant }) => {
    const tenant = await newTenant();
    const id = await createWorkOrder(tenant);
    const missing = context.database.schema ? sql.table(`${context.database.schema}.records`) : sql.table('records');
    const away = context.database.schema ? sql.table(`${context.database.schema}.records_away`) : sql.table('records_away');
    const rename = async (from: typeof missing, to: string) => {
      const statement = sql`ALTER TABLE ${from} RENAME TO ${sql.raw(to)}`;
      await (context.database.dialect === 'postgres' ? withSchemaChangeLock(() => statement.execute(context.database.db)) : statement.execute(context.database.db));
    };
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).statusCode, 200);
    await rename(missing, 'records_away');
    try {
      for (const url of ['/api/v1/records', `/api/v1/records/${id}`]) {
        const refused = await tenant.request({ method: 'GET', url });
        assert.match(assertUnavailable(refused, '30').detail, /lacks a table of this service.*wo migrate/);
      }
    } finally {
      await rename(away, 'records');
    }
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).statusCode, 200);
  });

  itOnEachDatabase('drains on shutdown: /readyz 503 while other requests are served with Connection: close, then every request 503', async ({ app, context }) => {
    context.lifecycle.beginDrain();
    const readiness = await app.inject({ method: 'GET', url: '/readyz' });
    assert.match(assertUnavailable(readiness, '1').detail, /shutting down/);
    const served = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    assert.equal(served.statusCode, 200);
    assert.equal(served.headers.connection, 'close');
    context.lifecycle.beginClosing();
    for (const url of ['/api/v1/openapi.json', '/healthz', '/api/v1/records']) {
      const refused = await app.inject({ method: 'GET', url });
      assert.match(assertUnavailable(refused, '1').detail, /shutting down/);
      assert.equal(refused.headers.connection, 'close');
    }
  });
});

describe('PostgreSQL statement and pool timeouts answer 503', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, () => {
  /** Holds an exclusive lock on `table` in the test's schema until the returned function is called. */
  async function lockTable(context: AppContext, table: string): Promise<() => Promise<void>> {
    const client = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path=${context.database.schema}` });
    await client.connect();
    await client.query('BEGIN');
    await client.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    return async () => {
      await client.query('COMMIT');
      await client.end();
    };
  }

  it('answers 503 when a statement runs past WO_DATABASE_STATEMENT_TIMEOUT_MS', async () => {
    const harness = await startTestApp('postgres', { env: { WO_DATABASE_STATEMENT_TIMEOUT_MS: '300' } });
    try {
      const tenant = await harness.newTenant();
      const unlock = await lockTable(harness.context, 'categories');
      try {
        const answer = await tenant.request({ method: 'GET', url: '/api/v1/categories' });
        assert.match(assertUnavailable(answer, '2').detail, /did not finish the work in time/);
      } finally {
        await unlock();
      }
      assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/categories' })).statusCode, 200);
    } finally {
      await harness.close();
    }
  });

  it('answers 503 when no pooled connection frees up within WO_DATABASE_POOL_WAIT_MS, and serves the held request afterwards', async () => {
    const harness = await startTestApp('postgres', { env: { WO_DATABASE_POOL_SIZE: '1', WO_DATABASE_POOL_WAIT_MS: '200' } });
    const monitor = new pg.Client({ connectionString: POSTGRES_URL });
    await monitor.connect();
    try {
      const tenant = await harness.newTenant();
      const unlock = await lockTable(harness.context, 'categories');
      let held: Promise<LightMyRequestResponse>;
      try {
        held = tenant.request({ method: 'GET', url: '/api/v1/categories' });
        // The one connection is now waiting on the lock.
        await waitFor(async () => {
          const { rows } = await monitor.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%categories%'`);
          return rows.length > 0;
        }, 10_000, 'the first request to wait on the lock');
        const refused = await tenant.request({ method: 'GET', url: '/api/v1/categories' });
        assert.match(assertUnavailable(refused, '2').detail, /connection of this process is busy/);
      } finally {
        await unlock();
      }
      assert.equal((await held).statusCode, 200);
    } finally {
      await monitor.end();
      await harness.close();
    }
  });
});
