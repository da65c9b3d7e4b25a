import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { verifyWebhookSignature } from '../../src/webhooks/signature.js';
import { TEST_DIALECTS, createPostgresDatabase } from '../helpers/databases.js';
import { waitFor } from '../helpers/test-app.js';
import { freePort } from '../helpers/free-port.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { killHard, startChildService } from '../helpers/child-services.js';

const EVENTS = 20;

for (const dialect of TEST_DIALECTS) {
  describe(`webhook deliveries survive kill -9 (${dialect})`, () => {
    let dataDir: string;
    let receiver: WebhookReceiver;
    let database: { url: string; drop: () => Promise<void> } | undefined;
    let child: ChildProcess | undefined;
    let env: Record<string, string>;

    before(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), 'wo-crash-'));
      database = dialect === 'postgres' ? await createPostgresDatabase('wo_crash') : undefined;
      receiver = await startReceiver(() => 'hang');
      env = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        WO_DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: String(await freePort()),
        LOG_LEVEL: 'silent',
        WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WO_WEBHOOK_RETRY_BASE_MS: '50',
        WO_WEBHOOK_TIMEOUT_MS: '1000',
        WO_WEBHOOK_IDLE_POLL_MS: '20',
        ...(database ? { DATABASE_URL: database.url } : {}),
      };
    });
    after(async () => {
      child?.kill('SIGKILL');
      await receiver.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    const startServer = (): Promise<ChildProcess> => startChildService(['serve'], env, env.PORT);

    it('delivers every committed event after the server is killed with SIGKILL and restarted', async () => {
      // Tenant, key and subscription are made through the service itself, on the same database.
      const config = loadConfig(env);
      const setup = await createContext(config, { logger: pino({ level: 'silent' }) });
      const org = await setup.organizations.create('Crash Org');
      const { key } = await setup.apiKeys.create({ orgId: org.id, name: 'crash', scopes: ['records:write', 'categories:write', 'webhooks:manage'], createdBy: 'test' });
      const category = await setup.categories.create(org.id, { name: 'Plumbing' });
      const { secret } = await setup.webhooks.create(org.id, { name: 'crash receiver', url: receiver.url, events: ['record.created'] });
      await setup.close();

      child = await startServer();
      const api = (url: string, body: unknown) =>
        fetch(`http://127.0.0.1:${env.PORT}${url}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      for (let i = 0; i < EVENTS; i++) {
        const response = await api('/api/v1/records', { categoryId: category.id, address: `${i} Main St`, requesterName: 'Ann', description: `leak ${i}` });
        assert.equal(response.status, 201);
      }
      // The receiver hangs, so deliveries are in flight (or still queued) when the process dies.
      await waitFor(() => receiver.received.length >= 1, 15_000, 'the first delivery to be in flight');
      await killHard(child);
      child = undefined;
      // The receiver never answered, so at the moment of the crash no event was acknowledged: every one
      // is still undispatched in the outbox or a pending/delivering delivery, whatever was already sent.
      const atCrash = await createContext(config, { logger: pino({ level: 'silent' }), migrate: false });
      try {
        const finished = await atCrash.database.db.selectFrom('webhook_deliveries').select('id').where('org_id', '=', org.id).where('status', 'in', ['succeeded', 'failed']).execute();
        assert.equal(finished.length, 0, 'no delivery may be finished when the process dies');
      } finally {
        await atCrash.close();
      }

      const receivedBeforeRestart = receiver.received.length;
      receiver.answer = () => ({ status: 200 });
      child = await startServer();
      const check = await createContext(config, { logger: pino({ level: 'silent' }), migrate: false });
      try {
        const emitted = await check.database.db.selectFrom('outbox_events').select('id').where('org_id', '=', org.id).where('type', '=', 'record.created').execute();
        assert.equal(emitted.length, EVENTS);
        const acknowledged = () => new Set(receiver.received.slice(receivedBeforeRestart).map((r) => r.headers['x-webhook-id'] as string));
        await waitFor(() => emitted.every((e) => acknowledged().has(e.id)), 30_000, 'every event to be delivered after the restart');
        for (const delivery of receiver.received) {
          assert.equal(verifyWebhookSignature(secret, delivery.body, delivery.headers['x-webhook-signature'] as string), true);
        }
        await waitFor(
          async () => {
            const rows = await check.database.db.selectFrom('webhook_deliveries').select('status').where('org_id', '=', org.id).execute();
            return rows.length === EVENTS && rows.every((r) => r.status === 'succeeded');
          },
          15_000,
          'every delivery to be recorded as succeeded',
        );
      } finally {
        await check.close();
        await killHard(child);
        child = undefined;
      }
    });
  });
}
