// Witnessing with real processes on PostgreSQL: one `wo serve --no-worker`, two `wo worker` (each
// with a sequencer and a witnessing job) and a `wo witness`; a worker is killed while completions are
// sealed. Every completion is delivered exactly once, under a checkpoint the witness cosigned.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { verifyBundle, type Jwks, type ProofBundle } from '../../src/proofs/verify.js';
import { POSTGRES_URL, createPostgresDatabase } from '../helpers/databases.js';
import { killHard, startChildService } from '../helpers/child-services.js';
import { freePort } from '../helpers/free-port.js';
import { waitFor } from '../helpers/test-app.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { startWitness, type ChildWitness } from '../helpers/witnesses.js';

const COMPLETIONS = 120;

async function call(port: string, key: string, method: string, url: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

if (POSTGRES_URL) {
  describe('witnessing with two workers on PostgreSQL, one killed while completions are sealed', () => {
    let dataDir: string;
    let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
    let receiver: WebhookReceiver;
    let witness: ChildWitness;
    const children: ChildProcess[] = [];

    before(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), 'wo-witnessed-workers-'));
      database = await createPostgresDatabase('wo_witnessed_workers');
      receiver = await startReceiver();
      witness = await startWitness('workers.test/witness');
    });
    after(async () => {
      await Promise.all(children.map((child) => killHard(child)));
      await witness.remove();
      await receiver.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('delivers every completion once, each under a checkpoint the witness cosigned', async () => {
      const policyFile = path.join(dataDir, 'policy.txt');
      const vkey = await witness.vkey();
      writeFileSync(policyFile, `witness W ${vkey} ${witness.url}\nquorum W\n`);
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        WO_DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        DATABASE_URL: database.url,
        WO_SECRET_KEY: randomBytes(32).toString('base64'),
        WO_KEYS_DIR: path.join(dataDir, 'keys'),
        WO_PUBLIC_URL: 'http://127.0.0.1',
        WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WO_WEBHOOK_RETRY_BASE_MS: '50',
        WO_WEBHOOK_IDLE_POLL_MS: '20',
        WO_RATE_LIMIT_PER_MINUTE: '0',
        WO_WORKER_PORT: '0',
        WO_PROOF_BATCH_INTERVAL_MS: '50',
        WO_WITNESS_POLICY: policyFile,
        WO_WITNESS_TIMEOUT_MS: '1000',
      };
      const port = String(await freePort());
      children.push(await startChildService(['serve', '--no-worker'], { ...env, PORT: port }, port));
      const logKey = (await (await fetch(`http://127.0.0.1:${port}/api/v1/transparency/verifier-key`)).text()).trim();
      await witness.cli(['add-log', '--origin', logKey.split('+')[0]!, '--vkey', logKey]);

      const setup = await createContext(loadConfig(env), { logger: pino({ level: 'silent' }) });
      let key: string;
      let categoryId: string;
      try {
        const org = await setup.organizations.create('Witnessed Org');
        key = (await setup.apiKeys.create({ orgId: org.id, name: 'burst', scopes: ['records:read', 'records:write', 'proofs:read'], createdBy: 'test' })).key;
        categoryId = (await setup.categories.create(org.id, { name: 'Plumbing' })).id;
        await setup.webhooks.create(org.id, { name: 'erp', url: receiver.url, events: ['record.proof_delivered'] });
      } finally {
        await setup.close();
      }
      const workers = [await startChildService(['worker'], env), await startChildService(['worker'], env)];
      children.push(...workers);

      const ids: string[] = [];
      for (let i = 0; i < COMPLETIONS; i++) {
        const created = await call(port, key, 'POST', '/api/v1/records', { categoryId, address: `${i} Dock Road`, requesterName: 'Ann', description: `leak ${i}`, assignee: 'Bob' });
        assert.equal(created.status, 201, JSON.stringify(created));
        assert.equal((await call(port, key, 'POST', `/api/v1/records/${created.body.id}/start`, {})).status, 200);
        ids.push(created.body.id as string);
      }
      for (const [i, id] of ids.entries()) {
        if (i === COMPLETIONS / 2) await killHard(workers[0]!);
        assert.equal((await call(port, key, 'POST', `/api/v1/records/${id}/complete`, { resolutionNotes: 'Replaced the washer.' })).status, 200);
      }

      const announced = () => new Set(receiver.ofEvent('record.proof_delivered').map((r) => r.json.payload.recordId as string));
      await waitFor(() => ids.every((id) => announced().has(id)), 90_000, 'every completion to be witnessed and announced');
      const announcements = receiver.ofEvent('record.proof_delivered');
      assert.equal(new Set(announcements.map((r) => r.headers['x-webhook-id'])).size, COMPLETIONS, 'one record.proof_delivered event per completion');

      const jwks = (await (await fetch(`http://127.0.0.1:${port}/.well-known/jwks.json`)).json()) as Jwks;
      const policy = `witness W ${vkey}\nquorum W\n`;
      for (const id of ids) {
        const response = await fetch(`http://127.0.0.1:${port}/api/v1/records/${id}/proof`, { headers: { authorization: `Bearer ${key}` } });
        assert.equal(response.status, 200, `the proof of ${id}`);
        const verdict = await verifyBundle((await response.json()) as ProofBundle, jwks, { policy });
        assert.ok(verdict.valid && verdict.witnessing?.cosigned.length === 1, `the proof of ${id} verifies with the policy: ${JSON.stringify(verdict)}`);
      }
    });
  });
}
