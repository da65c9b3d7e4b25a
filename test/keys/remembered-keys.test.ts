// An API process remembers the keys it authenticated (AuthenticatedKeys), so a request spends no round
// trip (on SQLite, no statement) on its key; a revocation anywhere still takes effect at once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { pino } from 'pino';
import { createContext, type AppContext } from '../../src/context.js';
import { POSTGRES_URL } from '../helpers/databases.js';
import { startTestApp, waitFor, type TestApp } from '../helpers/test-app.js';

describe('API keys remembered between requests (SQLite)', () => {
  let harness: TestApp;
  before(async () => {
    harness = await startTestApp('sqlite');
  });
  after(async () => {
    await harness?.close();
  });

  const listRecords = (key: string) => harness.app.inject({ method: 'GET', url: '/api/v1/records', headers: { authorization: `Bearer ${key}` } });
  /** `wo keys revoke`, run as a user runs it: another process, its own connection to the file. */
  const revokeFromTheCli = (keyId: string) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', path.resolve('src/main.ts'), 'keys', 'revoke', keyId], { env: { ...process.env, WO_DATA_DIR: harness.dataDir, LOG_LEVEL: 'warn', DATABASE_URL: '' } });

  it('reads a key once, then authenticates it from memory', async () => {
    const tenant = await harness.newTenant();
    assert.equal((await listRecords(tenant.key)).statusCode, 200);
    // Erased through the process's own connection, which moves no data_version: only memory still knows the key.
    await harness.context.database.db.deleteFrom('api_keys').where('id', '=', tenant.keyId).execute();
    assert.equal((await listRecords(tenant.key)).statusCode, 200, 'remembered: the row was not read again');
  });

  it('refuses a key on the very next request once `wo keys revoke` revoked it in another process', async () => {
    const tenant = await harness.newTenant();
    assert.equal((await listRecords(tenant.key)).statusCode, 200);
    assert.equal((await listRecords(tenant.key)).statusCode, 200);
    await revokeFromTheCli(tenant.keyId);
    assert.equal((await listRecords(tenant.key)).statusCode, 401);
  });

  it('forgets every key when any other connection commits to the file, and remembers again after', async () => {
    const tenant = await harness.newTenant();
    assert.equal((await listRecords(tenant.key)).statusCode, 200);
    // Another connection deletes the row: no revocation was announced, yet the next request reads the key again.
    const other = new SqliteDatabase(path.join(harness.dataDir, 'wo.sqlite'));
    try {
      other.pragma('busy_timeout = 5000');
      other.prepare('DELETE FROM api_keys WHERE id = ?').run(tenant.keyId);
    } finally {
      other.close();
    }
    // A read group this process had open at that moment keeps its snapshot, as any read would, until the
    // end of its event-loop turn; the first request after it reads the key again.
    await waitFor(async () => (await listRecords(tenant.key)).statusCode === 401, 5_000, 'the key read again');
    const fresh = await harness.newTenant();
    assert.equal((await listRecords(fresh.key)).statusCode, 200);
    await harness.context.database.db.deleteFrom('api_keys').where('id', '=', fresh.keyId).execute();
    assert.equal((await listRecords(fresh.key)).statusCode, 200, 'remembered again');
  });

  it('refuses a key at once when this process revokes it', async () => {
    const tenant = await harness.newTenant();
    assert.equal((await listRecords(tenant.key)).statusCode, 200);
    await harness.context.apiKeys.revoke(tenant.keyId);
    assert.equal((await listRecords(tenant.key)).statusCode, 401);
  });
});

if (POSTGRES_URL) {
  describe('API keys remembered between requests (PostgreSQL)', () => {
    let harness: TestApp;
    /** A second process's view of the same database: its own pool and connections. */
    let otherProcess: AppContext;
    let admin: pg.Client;
    before(async () => {
      harness = await startTestApp('postgres');
      // The harness migrated the schema; migrating again would introspect every schema while other
      // test files drop theirs ("schema … does not exist"), as helpers/databases.ts explains.
      otherProcess = await createContext(harness.config, { logger: pino({ level: 'silent' }), databaseSchema: harness.context.database.schema!, migrate: false });
      admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
    });
    after(async () => {
      await admin?.end();
      await otherProcess?.close();
      await harness?.close();
    });

    const schema = () => harness.context.database.schema!;
    const listRecords = (key: string) => harness.app.inject({ method: 'GET', url: '/api/v1/records', headers: { authorization: `Bearer ${key}` } });
    /** Erases the key's row behind the service's back: only a remembered key still authenticates. */
    const eraseKeyRow = (keyId: string) => admin.query(`DELETE FROM "${schema()}".api_keys WHERE id = $1`, [keyId]);
    /** Waits until the API process listens for revocations (it starts on the first authentication). */
    const listening = () =>
      waitFor(async () => {
        const { rows } = await admin.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle' AND query LIKE 'LISTEN %'`, [
          `wo-api-keys ${schema()}`,
        ]);
        return rows.length > 0;
      }, 5_000, 'the revocation listener');

    it('reads a key once, then authenticates it from memory', async () => {
      const tenant = await harness.newTenant();
      assert.equal((await listRecords(tenant.key)).statusCode, 200);
      await listening();
      assert.equal((await listRecords(tenant.key)).statusCode, 200);
      await eraseKeyRow(tenant.keyId);
      assert.equal((await listRecords(tenant.key)).statusCode, 200, 'remembered: the row was not read again');
    });

    it('refuses a key at once when another process revokes it', async () => {
      const tenant = await harness.newTenant();
      await listRecords(tenant.key);
      await listening();
      assert.equal((await listRecords(tenant.key)).statusCode, 200);
      const revokedAt = Date.now();
      await otherProcess.apiKeys.revoke(tenant.keyId);
      await waitFor(async () => (await listRecords(tenant.key)).statusCode === 401, 2_000, 'the revoked key refused');
      assert.ok(Date.now() - revokedAt < 2_000);
    });

    it('refuses a key at once when this process revokes it', async () => {
      const tenant = await harness.newTenant();
      await listRecords(tenant.key);
      await listening();
      await harness.context.apiKeys.revoke(tenant.keyId);
      assert.equal((await listRecords(tenant.key)).statusCode, 401);
    });

    it('remembers nothing while it cannot hear revocations, and again once it listens', async () => {
      const tenant = await harness.newTenant();
      await listRecords(tenant.key);
      await listening();
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [`wo-api-keys ${schema()}`]);
      // Once the process notices the loss (its client learns of it a moment after the backend is gone,
      // later still on a loaded machine), it forgets every key and reads each again: an erased row is refused.
      const second = await harness.newTenant();
      await eraseKeyRow(tenant.keyId);
      await waitFor(async () => (await listRecords(tenant.key)).statusCode === 401, 5_000, 'the key forgotten once the connection was lost');
      // Once it listens again, keys are remembered again: a fresh key authenticates after its row is gone.
      await waitFor(async () => {
        const fresh = await harness.newTenant();
        await listRecords(fresh.key);
        await eraseKeyRow(fresh.keyId);
        return (await listRecords(fresh.key)).statusCode === 200;
      }, 10_000, 'keys remembered again after the listener reconnected');
      assert.equal((await listRecords(second.key)).statusCode, 200);
    });
  });
}
