import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe } from 'node:test';
import type { VerifiedWebhook } from '@work-order-api/client';
import { startReceiver } from './receiver.js';
import { itAgainstLiveService, workOrderBody } from '../../sdk/test/live-service.js';
import { waitFor } from '../../test/helpers/test-app.js';

describe('examples/receiver against a real server', () => {
  itAgainstLiveService('verifies, answers at once, processes afterwards and only once per webhook id', async ({ client }) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-receiver-'));
    const processed: VerifiedWebhook[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const secrets: string[] = [];
    let failing = false;
    const receiver = await startReceiver({
      secrets,
      inboxPath: path.join(dir, 'inbox.db'),
      process: async (delivery) => {
        await held; // processing is slow; the service must not wait for it
        if (failing) throw new Error('the ERP is down');
        processed.push(delivery);
      },
    });
    let restarted: Awaited<ReturnType<typeof startReceiver>> | undefined;
    try {
      const webhook = await client.createWebhook({ body: { name: 'receiver example', url: receiver.url, events: ['record.created'] } });
      secrets.push(webhook.secret);
      const category = await client.createCategory({ body: { name: 'Plumbing' } });
      const record = await client.createRecord({ body: workOrderBody(category.id) });

      const [delivery] = await waitFor(async () => {
        const { deliveries } = await client.listWebhookDeliveries({ path: { id: webhook.id }, query: { status: 'succeeded' } });
        return deliveries.length === 1 && deliveries;
      }, 10_000, 'the delivery to succeed while processing is still held');
      assert.equal(processed.length, 0, 'answered before processing');
      release();
      await waitFor(() => processed.length === 1, 10_000, 'the processing');
      assert.equal(processed[0]!.event, 'record.created');
      if (processed[0]!.event === 'record.created') assert.equal(processed[0]!.payload.recordId, record.id);

      // A redelivery carries the same webhook id: answered, not processed again.
      await client.redeliverWebhookDelivery({ path: { id: webhook.id, deliveryId: delivery!.id } });
      await waitFor(async () => (await client.listWebhookDeliveries({ path: { id: webhook.id }, query: { status: 'succeeded' } })).total === 2, 10_000, 'the redelivery to succeed');
      await receiver.idle();
      assert.equal(processed.length, 1);

      const forged = await fetch(receiver.url, { method: 'POST', headers: { 'x-webhook-id': 'evt_forged', 'x-webhook-signature': `sha256=${'0'.repeat(64)}` }, body: '{}' });
      assert.equal(forged.status, 401);

      // Accepted but not processed (processing failed): processed when the receiver starts again.
      failing = true;
      const second = await client.createRecord({ body: workOrderBody(category.id) });
      await waitFor(async () => (await client.listWebhookDeliveries({ path: { id: webhook.id }, query: { status: 'succeeded' } })).total === 3, 10_000, 'the second delivery');
      await receiver.idle();
      assert.equal(processed.length, 1);
      await receiver.close();
      restarted = await startReceiver({ secrets, inboxPath: path.join(dir, 'inbox.db'), process: async (delivery) => void processed.push(delivery) });
      await restarted.idle();
      assert.deepEqual(processed.map((delivery) => delivery.event === 'record.created' && delivery.payload.recordId), [record.id, second.id]);
    } finally {
      release();
      await receiver.close().catch(() => undefined);
      await restarted?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
