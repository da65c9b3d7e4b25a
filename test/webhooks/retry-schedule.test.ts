import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { itOnEachDatabase, recordBody, seedCategory, waitFor } from '../helpers/test-app.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const BASE_MS = 100;
const FACTOR = 3;

describe('the webhook retry schedule', () => {
  itOnEachDatabase(
    'waits base × factor^(n−1), less at most 20 % jitter, after each failed attempt, and keeps a delivery that failed for good redeliverable',
    async (t) => {
      for (const job of t.context.backgroundJobs) job.start();
      const hook = await startReceiver(() => ({ status: 503 }));
      try {
        const tenant = await t.newTenant();
        const subscription = await tenant.request({ method: 'POST', url: '/api/v1/webhooks', payload: { name: 'down', url: hook.url, events: ['record.created'] } });
        const { id } = subscription.json() as { id: string };
        await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(await seedCategory(tenant)) });
        type Delivery = { id: string; status: string; attempts: { startedAt: string; durationMs: number }[] };
        const failed = await waitFor(
          async () => ((await tenant.request({ method: 'GET', url: `/api/v1/webhooks/${id}/deliveries` })).json().deliveries as Delivery[]).find((d) => d.status === 'failed'),
          15_000,
          'the delivery to fail for good',
        );
        assert.equal(failed.attempts.length, 4);
        const times = failed.attempts.map((a) => Date.parse(a.startedAt));
        for (let n = 1; n < 4; n++) {
          // From the end of attempt n (its start plus its duration) to the start of attempt n + 1.
          const waited = times[n]! - (times[n - 1]! + failed.attempts[n - 1]!.durationMs);
          const nominal = BASE_MS * FACTOR ** (n - 1);
          assert.ok(waited >= nominal * 0.8 - 5, `wait after attempt ${n}: ${waited} ms, nominal ${nominal} ms`);
        }

        hook.answer = () => ({ status: 204 });
        const again = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/deliveries/${failed.id}/redeliver` });
        assert.equal(again.statusCode, 202);
        await waitFor(() => hook.received.length === 5, 10_000, 'the redelivery');
        assert.equal(hook.received[4]!.headers['x-webhook-id'], hook.received[0]!.headers['x-webhook-id']);
      } finally {
        await hook.close();
      }
    },
    { env: { WO_WEBHOOK_RETRY_BASE_MS: String(BASE_MS), WO_WEBHOOK_RETRY_FACTOR: String(FACTOR), WO_WEBHOOK_IDLE_POLL_MS: '10' } },
  );
});
