import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { buildWorkerApp } from '../../src/worker-app.js';
import { itOnEachDatabase } from '../helpers/test-app.js';

/** The metric families a /metrics exposition declares. */
function families(exposition: string): Set<string> {
  return new Set([...exposition.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]!));
}

const API_ROLE = ['wo_http_request_duration_seconds', 'wo_event_feed_waiting_requests'];
const WORKER_ROLE = ['wo_webhook_in_flight', 'wo_webhook_deliveries_total', 'wo_proof_seals_total', 'wo_proof_last_seal_timestamp_seconds'];

describe('/metrics holds the metrics of the roles the process runs', () => {
  itOnEachDatabase('an API process without its background jobs (wo serve --no-worker): the API’s, and no delivery or sequencer series', async (t) => {
    const before = families((await t.app.inject({ method: 'GET', url: '/metrics' })).body);
    for (const name of API_ROLE) assert.ok(before.has(name), name);
    for (const name of WORKER_ROLE) assert.ok(!before.has(name), `${name} in an API-only process`);
    assert.ok(before.has('process_resident_memory_bytes'));

    // Taking the worker role on (wo serve) adds them.
    for (const job of t.context.backgroundJobs) job.start();
    const after = families((await t.app.inject({ method: 'GET', url: '/metrics' })).body);
    for (const name of [...API_ROLE, ...WORKER_ROLE]) assert.ok(after.has(name), name);
  });

  it('a worker process (wo worker): the delivery and sequencer series, and no request, rate-limit or feed series', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-metrics-roles-'));
    const context = await createContext(loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent', WO_RATE_LIMIT_PER_MINUTE: '600' }), {
      logger: pino({ level: 'silent' }),
      createKeys: true,
    });
    const worker = await buildWorkerApp(context);
    try {
      for (const job of context.backgroundJobs) job.start();
      const exposed = families((await worker.inject({ method: 'GET', url: '/metrics' })).body);
      for (const name of WORKER_ROLE) assert.ok(exposed.has(name), name);
      for (const name of [...API_ROLE, 'wo_rate_limit_refusals_total']) assert.ok(!exposed.has(name), `${name} in a worker`);
      assert.ok(exposed.has('process_resident_memory_bytes'));
    } finally {
      await worker.close();
      await context.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
