import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { ALL_SCOPES } from '../../src/features.js';
import { POSTGRES_URL, createPostgresDatabase } from '../helpers/databases.js';
import { startChildService, type ChildService } from '../helpers/child-service.js';
import { freePort } from '../helpers/free-port.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { recordBody, waitFor } from '../helpers/test-app.js';

const OUTAGES = 3;

/** Error and warning lines a child logged (pino levels 40 and up). */
function problemLines(logs: string): string[] {
  return logs.split('\n').filter((line) => /^\{"level":(40|50|60)/.test(line));
}

describe('a PostgreSQL outage, as real processes see it through a link the test cuts', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let proxy: TcpProxy;
  let dataDir: string;
  let api: ChildService | undefined;
  let worker: ChildService | undefined;
  let key: string;
  let categoryId: string;

  before(async () => {
    database = await createPostgresDatabase('wo_outage');
    const target = new URL(POSTGRES_URL!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    dataDir = mkdtempSync(path.join(tmpdir(), 'wo-outage-'));
    // The organization and key are made the way `wo` would, straight on the database.
    const config = loadConfig({ WO_DATA_DIR: dataDir, DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
    const context = await createContext(config, { logger: pino({ level: 'silent' }) });
    const org = await context.organizations.create('Outage Test');
    key = (await context.apiKeys.create({ orgId: org.id, name: 'test', scopes: ALL_SCOPES, createdBy: 'test' })).key;
    categoryId = (await context.categories.create(org.id, { name: 'Plumbing' })).id;
    await context.close();
  });

  after(async () => {
    await Promise.all([api?.kill(), worker?.kill()]);
    await proxy?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 unavailable with Retry-After and /readyz 503 while it lasts, stays alive, logs little, and recovers without a restart', async () => {
    const throughProxy = new URL(database.url);
    throughProxy.host = `127.0.0.1:${proxy.port}`;
    const env = { WO_DATA_DIR: dataDir, DATABASE_URL: throughProxy.toString(), WO_SHUTDOWN_DRAIN_MS: '0', WO_WEBHOOK_IDLE_POLL_MS: '20', WO_PROOF_BATCH_INTERVAL_MS: '50' };
    const apiPort = await freePort();
    const workerPort = await freePort();
    [api, worker] = await Promise.all([
      startChildService(['serve', '--no-worker'], { ...env, PORT: String(apiPort) }, apiPort),
      startChildService(['worker'], { ...env, WO_WORKER_PORT: String(workerPort) }, workerPort),
    ]);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const create = () => fetch(`${api!.base}/api/v1/records`, { method: 'POST', headers, body: JSON.stringify(recordBody(categoryId)) });
    // 0: no answer (a process that died is reported by bothAlive at the next check).
    const ready = (service: ChildService) => fetch(`${service.base}/readyz`).then((response) => response.status, () => 0);
    assert.equal((await create()).status, 201);

    const bothAlive = () => {
      for (const service of [api!, worker!]) if (!service.alive()) throw new Error(`a process died:\n${service.logs().slice(-3000)}`);
      return true;
    };

    for (let outage = 1; outage <= OUTAGES; outage++) {
      // Writes keep coming while the link is cut under them: each is created or refused with a 503, never a 500.
      let load = true;
      const statuses: number[] = [];
      const loadDone = (async () => {
        // 0: no answer at all (the process died).
        while (load) statuses.push(await create().then((response) => response.status, () => 0));
      })();
      try {
        await waitFor(() => statuses.length >= 5, 10_000, 'some creates before the cut');
        const logsBefore = problemLines(api.logs() + worker.logs()).length;
        await proxy.cut();

        const refused = await waitFor(async () => {
          bothAlive();
          const response = await fetch(`${api!.base}/api/v1/records`, { headers }).catch(() => undefined);
          return response?.status === 503 && response;
        }, 10_000, 'requests to be refused');
        assert.match(String(refused.headers.get('content-type')), /^application\/problem\+json/);
        assert.equal((await refused.json()).code, 'unavailable');
        assert.match(String(refused.headers.get('retry-after')), /^\d+$/);
        await waitFor(async () => bothAlive() && (await ready(api!)) === 503 && (await ready(worker!)) === 503, 10_000, 'both processes to report not ready');
        // The worker's problems name their request as the API's do.
        const workerNotReady: Response = await fetch(`${worker!.base}/readyz`);
        const workerProblem = (await workerNotReady.json()) as { code: string; requestId: string };
        assert.equal(workerProblem.code, 'unavailable');
        assert.match(workerProblem.requestId, /^req_[0-9A-Z]{26}$/);
        assert.equal(workerNotReady.headers.get('x-request-id'), workerProblem.requestId);
        const refusedSince = statuses.length;
        await waitFor(() => bothAlive() && statuses.length >= refusedSince + 20, 10_000, 'more creates during the outage');
        load = false;
        await loadDone;
        assert.deepEqual([...new Set(statuses)].filter((status) => status !== 201 && status !== 503), [], `outage ${outage}: only 201 and 503`);
        assert.ok(statuses.slice(refusedSince).every((status) => status === 503), 'refused while cut');
        bothAlive();
        const logged = problemLines(api.logs() + worker.logs()).length - logsBefore;
        assert.ok(logged <= 20, `outage ${outage}: ${logged} warning/error lines for ${statuses.length - refusedSince}+ refused requests`);
      } finally {
        load = false;
        await loadDone;
      }

      await proxy.restore();
      await waitFor(async () => bothAlive() && (await ready(api!)) === 200 && (await ready(worker!)) === 200, 15_000, 'both processes to be ready again');
      assert.equal((await create()).status, 201, `outage ${outage}: writes succeed again without a restart`);
    }
    assert.ok(api.alive() && worker.alive());
    assert.doesNotMatch(api.logs() + worker.logs(), /uncaught|unhandled/i);
  });
});
