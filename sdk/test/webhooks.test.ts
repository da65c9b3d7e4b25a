import assert from 'node:assert/strict';
import { after, describe } from 'node:test';
import { WebhookVerificationError, verifyWebhook } from '@work-order-api/client';
import { itAgainstLiveService, workOrderBody } from './live-service.js';
import { receiverPool, type ReceivedWebhook } from '../../test/helpers/webhook-receiver.js';
import { waitFor } from '../../test/helpers/test-app.js';

const receivers = receiverPool();
after(() => receivers.closeAll());

const withoutHeaders = (delivery: ReceivedWebhook, names: string[]) => Object.fromEntries(Object.entries(delivery.headers).filter(([name]) => !names.includes(name)));
const STANDARD = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];
const rejectedFor = (reason: string) => (error: unknown) => error instanceof WebhookVerificationError && error.reason === reason;

describe('verifyWebhook on real deliveries to a loopback receiver', () => {
  itAgainstLiveService('accepts a real delivery by either signature and answers its typed envelope', async ({ client }) => {
    const receiver = await receivers.start();
    const webhook = await client.createWebhook({ body: { name: 'erp', url: receiver.url, events: ['record.created'] } });
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    const record = await client.createRecord({ body: workOrderBody(category.id) });
    const delivery = await waitFor(() => receiver.ofEvent('record.created')[0], 10_000, 'the delivery');

    const verified = await verifyWebhook(delivery.body, delivery.headers, webhook.secret);
    assert.equal(verified.id, delivery.headers['x-webhook-id']);
    assert.equal(verified.event, 'record.created');
    if (verified.event === 'record.created') assert.equal(verified.payload.record.id, record.id);

    // The contract's signature alone (a proxy that drops the Standard Webhooks headers), from a fetch Headers too.
    const contractOnly = withoutHeaders(delivery, STANDARD);
    assert.equal((await verifyWebhook(Buffer.from(delivery.body), contractOnly, webhook.secret)).id, verified.id);
    assert.equal((await verifyWebhook(delivery.body, new Headers(contractOnly as Record<string, string>), webhook.secret)).event, 'record.created');
    // The Standard Webhooks signature alone.
    assert.equal((await verifyWebhook(delivery.body, withoutHeaders(delivery, ['x-webhook-signature']), webhook.secret)).id, verified.id);

    const tampered = delivery.body.replace(record.id, 'rec_01JD3Q4W8Y6V3C0M2ZP4K7N9XA');
    await assert.rejects(verifyWebhook(tampered, delivery.headers, webhook.secret), rejectedFor('bad_signature'));
    await assert.rejects(verifyWebhook(tampered, contractOnly, webhook.secret), rejectedFor('bad_signature'));
    await assert.rejects(verifyWebhook(delivery.body, delivery.headers, 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0'), rejectedFor('bad_signature'));
    await assert.rejects(verifyWebhook(delivery.body, withoutHeaders(delivery, [...STANDARD, 'x-webhook-signature']), webhook.secret), rejectedFor('missing_signature'));
    // A captured delivery replayed ten minutes later is refused by its timestamp.
    await assert.rejects(verifyWebhook(delivery.body, delivery.headers, webhook.secret, { now: () => Date.now() + 10 * 60_000 }), rejectedFor('timestamp_out_of_range'));
  });

  itAgainstLiveService('verifies with the old or the new secret during a rotation overlap', async ({ client }) => {
    const receiver = await receivers.start();
    const webhook = await client.createWebhook({ body: { name: 'erp', url: receiver.url, events: ['record.created'] } });
    const rotated = await client.rotateWebhookSecret({ path: { id: webhook.id }, body: { overlapSeconds: 3600 } });
    assert.notEqual(rotated.secret, webhook.secret);
    await client.pingWebhook({ path: { id: webhook.id } });
    const ping = await waitFor(() => receiver.ofEvent('webhook.ping')[0], 10_000, 'the ping');
    for (const headers of [ping.headers, withoutHeaders(ping, STANDARD)]) {
      assert.equal((await verifyWebhook(ping.body, headers, webhook.secret)).event, 'webhook.ping');
      assert.equal((await verifyWebhook(ping.body, headers, rotated.secret)).event, 'webhook.ping');
      assert.equal((await verifyWebhook(ping.body, headers, [rotated.secret, webhook.secret])).event, 'webhook.ping');
    }
  });
});
