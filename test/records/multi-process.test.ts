// Issue 22's promise, with real processes: two `wo serve --no-worker` and one `wo worker` on one
// PostgreSQL database take a concurrent burst from both sides. Nothing is lost, each Idempotency-Key
// makes exactly one work order, totals stay equal to COUNT(*), and every event reaches the receiver.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { RECORD_STATUSES } from '../../src/records/schemas.js';
import { POSTGRES_URL, createPostgresDatabase } from '../helpers/databases.js';
import { killHard, startChildService } from '../helpers/child-services.js';
import { freePort } from '../helpers/free-port.js';
import { waitFor } from '../helpers/test-app.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const KEYS = 150;

/** Runs `work` over `items` with at most `limit` in flight. */
async function inParallel<T, R>(items: T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!, index);
      }
    }),
  );
  return results;
}

if (POSTGRES_URL) {
  describe('two API processes and a worker on one PostgreSQL database', () => {
    let dataDir: string;
    let database: { url: string; drop: () => Promise<void> };
    let receiver: WebhookReceiver;
    const children: ChildProcess[] = [];
    let env: Record<string, string>;
    const apiPorts: string[] = [];

    before(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), 'wo-multi-'));
      database = await createPostgresDatabase('wo_multi');
      receiver = await startReceiver();
      env = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        WO_DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        DATABASE_URL: database.url,
        // Every process of a deployment shares the secret-encryption key and the keys directory.
        WO_SECRET_KEY: randomBytes(32).toString('base64'),
        WO_KEYS_DIR: path.join(dataDir, 'keys'),
        WO_PUBLIC_URL: 'http://127.0.0.1',
        WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WO_WEBHOOK_RETRY_BASE_MS: '50',
        WO_WEBHOOK_IDLE_POLL_MS: '20',
        WO_RATE_LIMIT_PER_MINUTE: '0',
        WO_WORKER_PORT: '0',
      };
    });
    after(async () => {
      await Promise.all(children.map((child) => killHard(child)));
      await receiver?.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('keeps one work order per key, exact totals and every event while both take a concurrent burst', async () => {
      const config = loadConfig(env);
      const setup = await createContext(config, { logger: pino({ level: 'silent' }) });
      const org = await setup.organizations.create('Multi Org');
      const { key } = await setup.apiKeys.create({ orgId: org.id, name: 'burst', scopes: ['records:read', 'records:write'], createdBy: 'test' });
      const category = await setup.categories.create(org.id, { name: 'Plumbing' });
      await setup.webhooks.create(org.id, { name: 'erp', url: receiver.url, events: ['record.created', 'record.status_changed'] });
      await setup.close();

      for (let i = 0; i < 2; i++) {
        const port = String(await freePort());
        apiPorts.push(port);
        children.push(await startChildService(['serve', '--no-worker'], { ...env, PORT: port }, port));
      }
      children.push(await startChildService(['worker'], env));

      const post = async (port: string, url: string, body: unknown, idempotencyKey?: string) => {
        const response = await fetch(`http://127.0.0.1:${port}${url}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
          body: JSON.stringify(body),
        });
        return { status: response.status, replay: response.headers.get('x-idempotent-replay'), body: (await response.json()) as { id: string; code?: string } };
      };

      // Each key is sent to both API processes at once, as a client retrying through a load balancer would.
      const keys = Array.from({ length: KEYS }, () => randomUUID());
      const pairs = await inParallel(keys, 25, (idempotencyKey, i) => {
        const body = { categoryId: category.id, address: `${i} Harbour Road`, requesterName: 'Ann', description: `leak ${i}` };
        return Promise.all(apiPorts.map((port) => post(port, '/api/v1/records', body, idempotencyKey)));
      });
      const ids: string[] = [];
      for (const pair of pairs) {
        for (const answer of pair) assert.ok(answer.status === 201 || answer.body.code === 'idempotency_key_in_use', JSON.stringify(answer));
        const created = pair.filter((answer) => answer.status === 201);
        assert.equal(new Set(created.map((answer) => answer.body.id)).size, 1, 'both answers name one work order');
        assert.equal(created.filter((answer) => answer.replay === null).length, 1, 'exactly one did the work');
        ids.push(created[0]!.body.id);
      }

      // Status changes from both processes at once.
      await inParallel(ids, 25, async (id, i) => {
        const port = apiPorts[i % 2]!;
        if (i % 3 === 0) return void (await post(port, `/api/v1/records/${id}/cancel`, { reason: 'Duplicate' }));
        assert.equal((await post(port, `/api/v1/records/${id}/assign`, { assignee: 'Bob' })).status, 200);
        if (i % 3 === 1) assert.equal((await post(apiPorts[(i + 1) % 2]!, `/api/v1/records/${id}/start`, {})).status, 200);
      });

      const check = await createContext(config, { logger: pino({ level: 'silent' }), migrate: false });
      try {
        const db = check.database.db;
        const rows = await db.selectFrom('records').select(['status', sql<string>`count(*)`.as('n')]).where('org_id', '=', org.id).groupBy('status').execute();
        const counted = new Map(rows.map((row) => [row.status, Number(row.n)]));
        assert.equal([...counted.values()].reduce((a, b) => a + b, 0), KEYS, 'one work order per key, none lost');
        for (const port of apiPorts) {
          for (const status of [undefined, ...RECORD_STATUSES]) {
            const response = await fetch(`http://127.0.0.1:${port}/api/v1/records?limit=1${status ? `&status=${status}` : ''}`, { headers: { authorization: `Bearer ${key}` } });
            const { total } = (await response.json()) as { total: number };
            assert.equal(total, status ? (counted.get(status) ?? 0) : KEYS, `total of ${status ?? 'the whole list'} on API ${port}`);
          }
        }
        const events = await db.selectFrom('outbox_events').select('id').where('org_id', '=', org.id).where('type', 'in', ['record.created', 'record.status_changed']).execute();
        const changes = ids.reduce((sum, _id, i) => sum + (i % 3 === 1 ? 2 : 1), 0);
        assert.equal(events.length, KEYS + changes, 'a created event per work order and a status change per action');
        const delivered = () => new Set(receiver.received.map((r) => r.headers['x-webhook-id'] as string));
        await waitFor(() => events.every((event) => delivered().has(event.id)), 60_000, 'every event to be delivered by the worker');
      } finally {
        await check.close();
      }
    });
  });
}
