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
    ];
    for (const [env, message] of cases) assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && message.test(e.message));
  });
});
