import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { ALL_SCOPES } from '../../src/features.js';
import { POSTGRES_URL } from '../helpers/databases.js';
import { startChildService, type ChildService } from '../helpers/child-service.js';
import { freePort } from '../helpers/free-port.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { recordBody, waitFor } from '../helpers/test-app.js';

/** Creates sent at once while a refusal is under way. */
const CLIENTS = 4;
/** Creates refused before the refusal ends. */
const REFUSED_CREATES = 300;
/** Warning and error lines one process may log in one refusal: a few per cause and per loop. */
const MAX_PROBLEM_LINES = 25;

/** One answer to a create, as the client saw it. */
interface CreateAnswer {
  status: number;
  code?: string;
  id?: string;
  retryAfter: string | null;
  contentType: string | null;
}

/** Error and warning lines a child logged (pino levels 40 and up). */
function problemLines(logs: string): string[] {
  return logs.split('\n').filter((line) => /^\{"level":(40|50|60)/.test(line));
}

/**
 * The database server refusing the service its connections while it stays up: what an operator's
 * `ALTER DATABASE … ALLOW_CONNECTIONS false`, `DROP ROLE` or `ALTER DATABASE … RENAME` does. Real
 * `wo serve --no-worker` and `wo worker` processes connect as a role of the test's own, on a database
 * of the test's own (never the shared one: these statements would refuse every other test too).
 */
describe('PostgreSQL refusing the service its connections, as real processes see it', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, () => {
  const suffix = randomBytes(4).toString('hex');
  const databaseName = `wo_refused_${suffix}`;
  const movedName = `${databaseName}_moved`;
  // The privileges are the group role's, so the login role can be dropped and made again without them.
  const groupRole = `wo_refused_app_${suffix}`;
  const loginRole = `wo_refused_svc_${suffix}`;
  const adminUrl = new URL(POSTGRES_URL ?? 'postgres://localhost/postgres');
  adminUrl.pathname = '/postgres';
  let admin: pg.Client;
  let dataDir: string;
  let receiver: WebhookReceiver;
  let api: ChildService | undefined;
  let worker: ChildService | undefined;
  let key: string;
  let categoryId: string;

  const urlFor = (user: string, database: string) => {
    const url = new URL(POSTGRES_URL!);
    url.username = user;
    url.password = '';
    url.pathname = `/${database}`;
    return url.toString();
  };
  /** Ends every session on the test's database but the asking one (it is on `postgres`). */
  const endSessions = (name = databaseName) => admin.query('SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
  const onTestDatabase = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: urlFor(adminUrl.username || 'postgres', databaseName) });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };

  before(async () => {
    admin = new pg.Client({ connectionString: adminUrl.toString() });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${databaseName}`);
    await admin.query(`CREATE ROLE ${groupRole} NOLOGIN`);
    await admin.query(`CREATE ROLE ${loginRole} LOGIN IN ROLE ${groupRole}`);
    dataDir = mkdtempSync(path.join(tmpdir(), 'wo-refused-'));
    receiver = await startReceiver();
    // Migrated, and the tenant made, as the database's owner; the service then runs as its own role.
    const config = loadConfig({ WO_DATA_DIR: dataDir, DATABASE_URL: urlFor(adminUrl.username || 'postgres', databaseName), LOG_LEVEL: 'silent', WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
    const context = await createContext(config, { logger: pino({ level: 'silent' }) });
    const org = await context.organizations.create('Refused Connections');
    key = (await context.apiKeys.create({ orgId: org.id, name: 'test', scopes: ALL_SCOPES, createdBy: 'test' })).key;
    categoryId = (await context.categories.create(org.id, { name: 'Plumbing' })).id;
    await context.webhooks.create(org.id, { name: 'erp', url: receiver.url, events: ['record.created'] });
    await context.close();
    await onTestDatabase((client) => client.query(`GRANT ALL ON ALL TABLES IN SCHEMA public TO ${groupRole}; GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ${groupRole}`));

    const env = {
      WO_DATA_DIR: dataDir,
      DATABASE_URL: urlFor(loginRole, databaseName),
      WO_SHUTDOWN_DRAIN_MS: '0',
      WO_WEBHOOK_IDLE_POLL_MS: '20',
      WO_WEBHOOK_RETRY_BASE_MS: '50',
      WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WO_PROOF_BATCH_INTERVAL_MS: '50',
      WO_RATE_LIMIT_PER_MINUTE: '0',
      // A delivery whose result could not be recorded is sent again once its lease (twice this plus 1 s) runs out.
      WO_WEBHOOK_TIMEOUT_MS: '1000',
    };
    const apiPort = await freePort();
    const workerPort = await freePort();
    [api, worker] = await Promise.all([
      startChildService(['serve', '--no-worker'], { ...env, PORT: String(apiPort) }, apiPort),
      startChildService(['worker'], { ...env, WO_WORKER_PORT: String(workerPort) }, workerPort),
    ]);
  });

  after(async () => {
    await Promise.all([api?.kill(), worker?.kill()]);
    await receiver?.close();
    if (admin) {
      for (const name of [databaseName, movedName]) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      for (const role of [loginRole, groupRole]) await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const bothAlive = () => {
    for (const service of [api!, worker!]) if (!service.alive()) throw new Error(`a process died:\n${service.logs().slice(-3000)}`);
    return true;
  };
  const ready = (service: ChildService) => fetch(`${service.base}/readyz`).then((response) => response.status, () => 0);

  async function create(): Promise<CreateAnswer> {
    const response = await fetch(`${api!.base}/api/v1/records`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(recordBody(categoryId)),
    }).catch(() => undefined);
    // 0: no answer at all (the process died, which bothAlive reports).
    if (!response) return { status: 0, retryAfter: null, contentType: null };
    const body = (await response.json()) as { id?: string; code?: string };
    return { status: response.status, ...(body.code ? { code: body.code } : {}), ...(response.status === 201 ? { id: body.id! } : {}), retryAfter: response.headers.get('retry-after'), contentType: response.headers.get('content-type') };
  }

  /**
   * Creates keep coming from CLIENTS clients while `refuse` runs and the refusal lasts; once creates
   * are refused with a 503 (and both processes report not ready), `restore` ends it. Checks that
   * every answer was a 201 or a 503 `unavailable` with Retry-After, that creates succeed again in the
   * same processes, that every 201'd work order is in the database, and that the worker delivered
   * each one's record.created webhook once the database was back.
   */
  async function throughRefusal(refuse: () => Promise<void>, restore: () => Promise<void>): Promise<CreateAnswer[]> {
    assert.equal((await create()).status, 201, 'creates succeed before');
    const logsBefore = [api!, worker!].map((service) => problemLines(service.logs()).length);
    const answers: CreateAnswer[] = [];
    let load = true;
    const clients = Array.from({ length: CLIENTS }, async () => {
      while (load) answers.push(await create());
    });
    let restored = false;
    try {
      await waitFor(() => answers.filter((answer) => answer.status === 201).length >= 10, 20_000, 'some creates before the refusal');
      await refuse();
      const refusedFrom = answers.length;
      // Counted as refused whatever the status: which statuses they were is checked below.
      // Long enough for every loop of the worker to fail a few turns, and for its log throttles to matter.
      await waitFor(() => bothAlive() && answers.slice(refusedFrom).filter((answer) => answer.status !== 201).length >= REFUSED_CREATES, 30_000, 'creates to be refused');
      await waitFor(async () => bothAlive() && (await ready(api!)) === 503 && (await ready(worker!)) === 503, 10_000, 'both processes to report not ready');
      await restore();
      restored = true;
      const restoredFrom = answers.length;
      await waitFor(() => bothAlive() && answers.slice(restoredFrom).filter((answer) => answer.status === 201).length >= 10, 20_000, 'creates to succeed again without a restart');
    } finally {
      load = false;
      await Promise.all(clients);
      // The next test starts on a database that serves.
      if (!restored) await restore();
    }
    const unexpected = answers.filter(
      (answer) => !(answer.status === 201 || (answer.status === 503 && answer.code === 'unavailable' && /^\d+$/.test(answer.retryAfter ?? '') && /^application\/problem\+json/.test(answer.contentType ?? ''))),
    );
    assert.deepEqual(unexpected, [], 'every answer a 201, or a 503 `unavailable` problem with Retry-After');
    await waitFor(async () => bothAlive() && (await ready(api!)) === 200 && (await ready(worker!)) === 200, 20_000, 'both processes to be ready again');

    // Nothing accepted is lost: every 201 is a work order in the database.
    const created = answers.filter((answer) => answer.status === 201).map((answer) => answer.id!);
    const stored = await onTestDatabase(async (client) => (await client.query<{ id: string }>('SELECT id FROM records WHERE id = ANY($1)', [created])).rows.map((row) => row.id));
    assert.deepEqual(new Set(stored), new Set(created), 'every work order answered 201 is stored');
    // The worker came through it and delivers again: each created work order's webhook arrives.
    const delivered = () => new Set(receiver.ofEvent('record.created').map((request) => request.json.payload.recordId as string));
    await waitFor(() => bothAlive() && created.every((id) => delivered().has(id)), 30_000, 'the worker to deliver every record.created');
    assert.doesNotMatch(api!.logs() + worker!.logs(), /uncaught|unhandled/i);
    // Logged at a throttled rate: a line per cause now and then, not one per refused request or failed turn.
    const [apiLines, workerLines] = [api!, worker!].map((service, i) => problemLines(service.logs()).slice(logsBefore[i]));
    for (const [name, lines] of [['API', apiLines!], ['worker', workerLines!]] as const) {
      assert.ok(lines.length <= MAX_PROBLEM_LINES, `${name}: ${lines.length} warning and error lines for ${REFUSED_CREATES}+ refused creates:\n${lines.map((line) => line.slice(0, 300)).join('\n')}`);
    }
    return answers;
  }

  it('answers 201 or 503 while the database stops accepting connections and its sessions are ended, and recovers when it accepts them again', async () => {
    const answers = await throughRefusal(
      async () => {
        await admin.query(`ALTER DATABASE ${databaseName} ALLOW_CONNECTIONS false`);
        await endSessions();
      },
      async () => {
        await admin.query(`ALTER DATABASE ${databaseName} ALLOW_CONNECTIONS true`);
      },
    );
    assert.ok(answers.some((answer) => answer.status === 503));
    assert.match(api!.logs(), /is not currently accepting connections/, 'the cause is logged');
  });

  it('answers 503 while the service’s role is dropped, and recovers once it is made again', async () => {
    await throughRefusal(
      async () => {
        // Sessions already open keep running as the dropped role (without its privileges) until ended.
        await admin.query(`DROP ROLE ${loginRole}`);
        await endSessions();
      },
      async () => {
        await admin.query(`CREATE ROLE ${loginRole} LOGIN IN ROLE ${groupRole}`);
      },
    );
    assert.match(api!.logs(), new RegExp(`role \\\\"${loginRole}\\\\" does not exist`), 'the cause is logged');
  });

  it('answers 503 while the database is renamed, and recovers once its name is back', async () => {
    await throughRefusal(
      async () => {
        // A database in use cannot be renamed: connections are refused first, and those open ended.
        await admin.query(`ALTER DATABASE ${databaseName} ALLOW_CONNECTIONS false`);
        await endSessions();
        await admin.query(`ALTER DATABASE ${databaseName} RENAME TO ${movedName}`);
        await admin.query(`ALTER DATABASE ${movedName} ALLOW_CONNECTIONS true`);
      },
      async () => {
        await waitFor(() => admin.query(`ALTER DATABASE ${movedName} RENAME TO ${databaseName}`).then(() => true, () => endSessions(movedName).then(() => false)), 10_000, 'the database to take its name back');
      },
    );
    assert.match(api!.logs(), new RegExp(`database \\\\"${databaseName}\\\\" does not exist`), 'the cause is logged');
  });
});
