import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { POSTGRES_URL, TEST_DIALECTS, createPostgresDatabase } from '../helpers/databases.js';
import { killHard, startChildService } from '../helpers/child-services.js';
import { freePort } from '../helpers/free-port.js';
import { recordBody, seedCategory, startTestApp, waitFor } from '../helpers/test-app.js';
import { waitingFeedRequests } from '../helpers/event-feed.js';

const skip = !TEST_DIALECTS.includes('postgres');

describe('event feed long-polls on PostgreSQL', () => {
  it('a long-poll in one process is woken by an event created through another', { skip }, async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-feed-'));
    const database = await createPostgresDatabase('wo_feed');
    const children: ChildProcess[] = [];
    try {
      const base = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        WO_DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        WO_WEBHOOK_IDLE_POLL_MS: '20',
        DATABASE_URL: database.url,
      };
      const setup = await createContext(loadConfig(base), { logger: pino({ level: 'silent' }) });
      const org = await setup.organizations.create('Feed Org');
      const { key } = await setup.apiKeys.create({ orgId: org.id, name: 'feed', scopes: ['events:read', 'records:write'], createdBy: 'test' });
      const category = await setup.categories.create(org.id, { name: 'Plumbing' });
      await setup.close();

      // The waiting process serves the API only: it dispatches nothing, so only a notification can wake it.
      const waiterPort = String(await freePort());
      const writerPort = String(await freePort());
      children.push(await startChildService(['serve', '--no-worker'], { ...base, PORT: waiterPort }, waiterPort));
      children.push(await startChildService(['serve'], { ...base, PORT: writerPort }, writerPort));
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

      const longPoll = fetch(`http://127.0.0.1:${waiterPort}/api/v1/events?type=record.created&wait=25`, { headers });
      await waitFor(
        async () => /^wo_event_feed_waiting_requests 1$/m.test(await (await fetch(`http://127.0.0.1:${waiterPort}/metrics`)).text()),
        15_000,
        'the long-poll to wait in the first process',
      );
      const created = await fetch(`http://127.0.0.1:${writerPort}/api/v1/records`, { method: 'POST', headers, body: JSON.stringify(recordBody(category.id)) });
      assert.equal(created.status, 201);
      const createdAt = Date.now();
      const answer = await longPoll;
      const elapsed = Date.now() - createdAt;
      assert.equal(answer.status, 200);
      const page = (await answer.json()) as { events: { payload: { recordId: string } }[] };
      assert.deepEqual(
        page.events.map((event) => event.payload.recordId),
        [((await created.json()) as { id: string }).id],
      );
      assert.ok(elapsed < 10_000, `answered ${elapsed} ms after the create, long before its 25 s wait`);
    } finally {
      for (const child of children) await killHard(child);
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('listens again after the server drops the LISTEN connection, and long-polls keep being woken', { skip }, async () => {
    const t = await startTestApp('postgres');
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      for (const job of t.context.backgroundJobs) job.start();
      const listener = async () => {
        const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [`wo-event-feed ${t.context.database.schema}`]);
        return rows[0]?.pid;
      };
      // The connection drops while a long-poll waits: it must reconnect by itself, for the waiting request.
      const longPoll = tenant.request({ method: 'GET', url: '/api/v1/events?type=record.created&wait=25' });
      await waitFor(async () => (await waitingFeedRequests(t.context)) === 1, 10_000, 'the long-poll to wait');
      const first = await waitFor(listener, 10_000, 'the LISTEN connection');
      await admin.query('SELECT pg_terminate_backend($1)', [first]);
      await waitFor(async () => ((await listener()) ?? first) !== first, 15_000, 'a new LISTEN connection');
      const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) });
      const createdAt = Date.now();
      const answer = await longPoll;
      assert.equal(answer.statusCode, 200);
      assert.deepEqual(
        answer.json().events.map((event: { payload: { recordId: string } }) => event.payload.recordId),
        [created.json().id],
      );
      assert.ok(Date.now() - createdAt < 10_000);
    } finally {
      await admin.end();
      await t.close();
    }
  });
});
