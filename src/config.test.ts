import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ConfigError, loadConfig } from './config.js';

describe('configuration', () => {
  it('defaults to SQLite under ./data on port 8080 with the contract’s webhook limits', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.dataDir, path.resolve('data'));
    assert.equal(config.webhooks.timeoutMs, 10_000);
    assert.equal(config.webhooks.maxAttempts, 4);
    assert.equal(config.webhooks.allowPrivateUrls, false);
    assert.equal(config.idempotency.ttlHours, 24);
    assert.ok(Object.isFrozen(config));
  });

  it('reads the documented variables', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      WO_DATA_DIR: '/tmp/wo-x',
      DATABASE_URL: 'postgres://u@h/db',
      WO_PUBLIC_URL: 'https://wo.example.com/',
      LOG_LEVEL: 'debug',
      WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WO_WEBHOOK_RETRY_BASE_MS: '25',
    });
    assert.equal(config.port, 9000);
    assert.equal(config.databaseUrl, 'postgres://u@h/db');
    assert.equal(config.publicUrl, 'https://wo.example.com');
    assert.equal(config.keysDir, '/tmp/wo-x/keys');
    assert.equal(config.webhooks.allowPrivateUrls, true);
    assert.equal(config.webhooks.retryBaseMs, 25);
  });

  it('bounds V8 heap growth at 50 % by default; WO_HEAP_GROWING_PERCENT=0 leaves V8 its own factor', () => {
    assert.equal(loadConfig({}).heapGrowingPercent, 50);
    assert.equal(loadConfig({ WO_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent, 0);
    assert.equal(loadConfig({ WO_HEAP_GROWING_PERCENT: '100' }).heapGrowingPercent, 100);
    assert.throws(() => loadConfig({ WO_HEAP_GROWING_PERCENT: '-5' }), /WO_HEAP_GROWING_PERCENT/);
    assert.throws(() => loadConfig({ WO_HEAP_GROWING_PERCENT: 'half' }), /WO_HEAP_GROWING_PERCENT/);
  });

  it('limits each API key to 6,000 requests a minute by default; WO_RATE_LIMIT_PER_MINUTE=0 turns limiting off', () => {
    assert.deepEqual(loadConfig({}).rateLimit, { perMinute: 6000, redisKeyPrefix: 'wo:rate' });
    assert.equal(loadConfig({ WO_RATE_LIMIT_PER_MINUTE: '0' }).rateLimit.perMinute, 0);
    assert.equal(loadConfig({ WO_RATE_LIMIT_REDIS_PREFIX: 'staging:rate' }).rateLimit.redisKeyPrefix, 'staging:rate');
    assert.throws(() => loadConfig({ WO_RATE_LIMIT_PER_MINUTE: 'lots' }), /WO_RATE_LIMIT_PER_MINUTE/);
    assert.throws(() => loadConfig({ REDIS_URL: 'http://127.0.0.1:6379' }), /REDIS_URL/);
  });

  it('reads WO_CORS_ORIGINS as no CORS when unset, any origin for *, or a list of origins', () => {
    assert.equal(loadConfig({}).corsOrigins, undefined);
    assert.equal(loadConfig({ WO_CORS_ORIGINS: ' ' }).corsOrigins, undefined);
    assert.equal(loadConfig({ WO_CORS_ORIGINS: '*' }).corsOrigins, '*');
    assert.deepEqual(loadConfig({ WO_CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' }).corsOrigins, ['https://app.example.com', 'http://localhost:5173']);
  });

  it('keeps events 30 days by default, WO_EVENT_RETENTION_DAYS apart from the delivery retention', () => {
    assert.equal(loadConfig({}).events.retentionDays, 30);
    const config = loadConfig({ WO_EVENT_RETENTION_DAYS: '90', WO_WEBHOOK_RETENTION_DAYS: '7' });
    assert.deepEqual([config.events.retentionDays, config.webhooks.retentionDays], [90, 7]);
    assert.throws(() => loadConfig({ WO_EVENT_RETENTION_DAYS: '0' }), /WO_EVENT_RETENTION_DAYS/);
  });

  it('refuses invalid values with a message naming the variable', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: 'eighty' }, /PORT/],
      [{ PORT: '70000' }, /PORT/],
      [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
      [{ WO_PUBLIC_URL: 'ftp://x' }, /WO_PUBLIC_URL/],
      [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
      [{ WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'maybe' }, /WO_WEBHOOK_ALLOW_PRIVATE_URLS/],
      [{ WO_WEBHOOK_RETRY_BASE_MS: '-5' }, /WO_WEBHOOK_RETRY_BASE_MS/],
      [{ WO_CORS_ORIGINS: 'app.example.com' }, /WO_CORS_ORIGINS/],
      [{ WO_CORS_ORIGINS: 'https://app.example.com/' }, /WO_CORS_ORIGINS/],
      [{ WO_CORS_ORIGINS: 'https://a.example.com,ftp://b.example.com' }, /WO_CORS_ORIGINS/],
    ];
    for (const [env, message] of cases) assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && message.test(e.message));
  });

  it('reads WO_TSA_URL only with WO_TSA_ROOTS, and refuses either alone or a URL that is not http(s)', () => {
    assert.equal(loadConfig({}).proofs.timestampAuthority, undefined);
    const config = loadConfig({ WO_TSA_URL: 'https://tsa.example.com/tsr', WO_TSA_ROOTS: 'roots.pem' });
    assert.deepEqual(config.proofs.timestampAuthority, { url: 'https://tsa.example.com/tsr', rootsFile: path.resolve('roots.pem') });
    const refusals: [Record<string, string>, RegExp][] = [
      [{ WO_TSA_URL: 'https://tsa.example.com/tsr' }, /WO_TSA_URL is set without WO_TSA_ROOTS/],
      [{ WO_TSA_ROOTS: 'roots.pem' }, /WO_TSA_ROOTS is set without WO_TSA_URL/],
      [{ WO_TSA_URL: 'ftp://tsa.example.com', WO_TSA_ROOTS: 'roots.pem' }, /WO_TSA_URL must be an absolute http\(s\) URL/],
      [{ WO_TSA_URL: 'tsa.example.com', WO_TSA_ROOTS: 'roots.pem' }, /WO_TSA_URL must be an absolute http\(s\) URL/],
    ];
    for (const [env, message] of refusals) assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && message.test(e.message));
  });

  it('serves the worker’s health on 8081 and drains for 5 s by default; 0 turns either off', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.workerPort, 8081);
    assert.equal(defaults.shutdownDrainMs, 5000);
    const off = loadConfig({ WO_WORKER_PORT: '0', WO_SHUTDOWN_DRAIN_MS: '0' });
    assert.equal(off.workerPort, 0);
    assert.equal(off.shutdownDrainMs, 0);
    assert.throws(() => loadConfig({ WO_WORKER_PORT: '70000' }), /WO_WORKER_PORT/);
  });

  it('sizes the PostgreSQL pool from WO_DATABASE_POOL_SIZE or the max parameter of DATABASE_URL, and refuses the two disagreeing', () => {
    const url = 'postgres://u@h/db';
    assert.deepEqual(loadConfig({ DATABASE_URL: url }).database, { poolSize: 10, poolWaitMs: 5000, statementTimeoutMs: 30_000 });
    assert.equal(loadConfig({ DATABASE_URL: url, WO_DATABASE_POOL_SIZE: '4' }).database.poolSize, 4);
    assert.equal(loadConfig({ DATABASE_URL: `${url}?max=25` }).database.poolSize, 25);
    assert.equal(loadConfig({ DATABASE_URL: `${url}?max=25`, WO_DATABASE_POOL_SIZE: '25' }).database.poolSize, 25);
    assert.throws(() => loadConfig({ DATABASE_URL: `${url}?max=25`, WO_DATABASE_POOL_SIZE: '4' }), /WO_DATABASE_POOL_SIZE \(4\) and the max parameter of DATABASE_URL \(25\)/);
    assert.throws(() => loadConfig({ DATABASE_URL: `${url}?max=many` }), /max parameter of DATABASE_URL/);
    assert.throws(() => loadConfig({ WO_DATABASE_POOL_SIZE: '0' }), /WO_DATABASE_POOL_SIZE/);
    const tuned = loadConfig({ WO_DATABASE_POOL_WAIT_MS: '250', WO_DATABASE_STATEMENT_TIMEOUT_MS: '0' }).database;
    assert.equal(tuned.poolWaitMs, 250);
    assert.equal(tuned.statementTimeoutMs, 0);
  });
});
