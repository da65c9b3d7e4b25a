import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { itOnEachDatabase, recordBody, seedCategory, waitFor, type Tenant } from '../helpers/test-app.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

interface DeliveryView {
  id: string;
  status: string;
  attemptCount: number;
  lastError: string | null;
  attempts: { attempt: number; statusCode: number | null; error: string | null }[];
}

async function deliveries(tenant: Tenant, webhookId: string): Promise<DeliveryView[]> {
  const response = await tenant.request({ method: 'GET', url: `/api/v1/webhooks/${webhookId}/deliveries?limit=100` });
  assert.equal(response.statusCode, 200, response.body);
  return response.json().deliveries;
}

const ENV = { WO_WEBHOOK_RETRY_BASE_MS: '20', WO_WEBHOOK_IDLE_POLL_MS: '10', WO_WEBHOOK_TIMEOUT_MS: '2000' };
const RECORDS = 6;

describe('a webhook subscription whose secret cannot be decrypted', () => {
  itOnEachDatabase(
    'fails alone: its attempts record secret_unusable while the other subscriptions in the same batches are delivered',
    async (t) => {
      const tenant = await t.newTenant();
      const healthy = await startReceiver();
      const broken = await startReceiver();
      try {
        const subscribe = async (url: string) => {
          const response = await tenant.request({ method: 'POST', url: '/api/v1/webhooks', payload: { name: 'receiver', url, events: ['record.created'] } });
          assert.equal(response.statusCode, 201, response.body);
          return response.json() as { id: string };
        };
        const good = await subscribe(healthy.url);
        const bad = await subscribe(broken.url);
        // As if sealed by a process holding another secret-encryption key.
        const foreignKey = randomBytes(32);
        await t.context.database.db
          .updateTable('webhook_subscriptions')
          .set({ secret_ciphertext: new SecretBox(() => foreignKey).seal('whsec_foreign', bad.id) })
          .where('id', '=', bad.id)
          .execute();

        // Written before the worker runs, so that the first claim holds both subscriptions' deliveries.
        const categoryId = await seedCategory(tenant);
        for (let i = 0; i < RECORDS; i++) {
          const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) });
          assert.equal(response.statusCode, 201, response.body);
        }
        for (const job of t.context.backgroundJobs) job.start();

        await waitFor(() => healthy.received.length >= RECORDS, 15_000, 'the healthy subscription’s deliveries');
        const delivered = await waitFor(async () => {
          const list = await deliveries(tenant, good.id);
          return list.length === RECORDS && list.every((d) => d.status === 'succeeded') ? list : undefined;
        }, 15_000, 'the healthy deliveries to be recorded');
        assert.ok(delivered.every((d) => d.attemptCount === 1));

        const failed = await waitFor(async () => {
          const list = await deliveries(tenant, bad.id);
          return list.length === RECORDS && list.every((d) => d.status === 'failed') ? list : undefined;
        }, 20_000, 'the unusable subscription’s deliveries to fail');
        assert.equal(broken.received.length, 0, 'nothing is sent without a usable secret');
        for (const delivery of failed) {
          assert.equal(delivery.attemptCount, 4, 'retried on the usual schedule, then failed');
          assert.equal(delivery.attempts.length, 4);
          for (const attempt of delivery.attempts) {
            assert.equal(attempt.statusCode, null);
            assert.match(attempt.error ?? '', /^secret_unusable: .*WO_SECRET_KEY.*rotate-secret/);
          }
          assert.match(delivery.lastError ?? '', /^secret_unusable/);
        }

        const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
        assert.match(metrics, new RegExp(`wo_webhook_attempts_total\\{result="secret_unusable"\\} ${RECORDS * 4}\\b`));
        assert.match(metrics, new RegExp(`wo_webhook_deliveries_total\\{outcome="failed"\\} ${RECORDS}\\b`));
        assert.match(metrics, new RegExp(`wo_webhook_deliveries_total\\{outcome="succeeded"\\} ${RECORDS}\\b`));

        // Rotating the secret seals a new one with the deployment's key: redelivery then goes out.
        const rotated = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${bad.id}/rotate-secret`, payload: { overlapSeconds: 0 } });
        assert.equal(rotated.statusCode, 200, rotated.body);
        const redeliver = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${bad.id}/deliveries/${failed[0]!.id}/redeliver` });
        assert.ok(redeliver.statusCode < 300, redeliver.body);
        await waitFor(() => broken.received.length >= 1, 15_000, 'the redelivery after the rotation');
      } finally {
        await Promise.all([healthy.close(), broken.close()]);
      }
    },
    { env: ENV },
  );
});
