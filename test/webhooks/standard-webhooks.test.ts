// Deliveries checked the way a receiver checks them: with `standardwebhooks`, the Standard Webhooks
// reference library, and the secret exactly as the API returned it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, waitFor, type TestApp, type Tenant } from '../helpers/test-app.js';
import { receiverPool, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { verifyWebhookSignature } from '../../src/webhooks/signature.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';

/** What a receiver hands the library: the three webhook-* headers, as received. */
function standardHeaders(delivery: ReceivedWebhook): Record<string, string> {
  return {
    'webhook-id': delivery.headers['webhook-id'] as string,
    'webhook-timestamp': delivery.headers['webhook-timestamp'] as string,
    'webhook-signature': delivery.headers['webhook-signature'] as string,
  };
}

function verifies(secret: string, delivery: ReceivedWebhook, headers = standardHeaders(delivery)): boolean {
  try {
    new Webhook(secret).verify(delivery.body, headers);
    return true;
  } catch {
    return false;
  }
}

/** The conversion docs/webhooks.md gives for a secret issued in base64url (before standard base64). */
const fromBase64Url = (secret: string) => `whsec_${Buffer.from(secret.slice(6), 'base64url').toString('base64')}`;

for (const dialect of TEST_DIALECTS) {
  describe(`Standard Webhooks signatures on deliveries (${dialect})`, () => {
    let t: TestApp;
    const receivers = receiverPool();
    const receiver = (answer?: WebhookReceiver['answer']) => receivers.start(answer);
    const subscribe = async (tenant: Tenant, url: string): Promise<{ id: string; secret: string }> => {
      const response = await tenant.request({ method: 'POST', url: '/api/v1/webhooks', payload: { name: 'standard receiver', url, events: ['record.created'] } });
      assert.equal(response.statusCode, 201, response.body);
      return response.json();
    };
    const createRecord = async (tenant: Tenant) => {
      const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(await seedCategory(tenant)) });
      assert.equal(response.statusCode, 201, response.body);
    };

    before(async () => {
      t = await startTestApp(dialect, { env: { WO_WEBHOOK_RETRY_BASE_MS: '50', WO_WEBHOOK_IDLE_POLL_MS: '10' } });
      for (const job of t.context.backgroundJobs) job.start();
    });
    after(async () => {
      await t.close();
      await receivers.closeAll();
    });

    it('carries webhook-id, webhook-timestamp and webhook-signature that the standardwebhooks library verifies with the secret returned at creation', async () => {
      const tenant = await t.newTenant();
      const hook = await receiver();
      const { secret } = await subscribe(tenant, hook.url);
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'standard base64, as the spec serializes secrets');
      await createRecord(tenant);
      const [delivery] = await waitFor(() => (hook.received.length > 0 ? hook.received : undefined), 10_000, 'the delivery');
      const { headers, body } = delivery!;

      assert.equal(headers['webhook-id'], headers['x-webhook-id']);
      assert.match(headers['webhook-timestamp'] as string, /^\d+$/);
      assert.ok(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000) < 30, 'the timestamp is the time of sending, in seconds');
      assert.match(headers['webhook-signature'] as string, /^v1,[A-Za-z0-9+/]{43}=$/);
      assert.deepEqual(new Webhook(secret).verify(body, standardHeaders(delivery!)), JSON.parse(body));
      // The contract's headers are unchanged beside them.
      assert.equal(headers['x-webhook-event'], 'record.created');
      assert.equal(verifyWebhookSignature(secret, body, headers['x-webhook-signature'] as string), true);

      // The signature covers the id, the time and the body: change any and it no longer verifies.
      const tampered = standardHeaders(delivery!);
      assert.equal(verifies(secret, delivery!, { ...tampered, 'webhook-id': 'evt_01JD3Q4W8Y6V3C0M2ZP4K7N9XA' }), false);
      assert.equal(verifies(secret, delivery!, { ...tampered, 'webhook-timestamp': String(Number(tampered['webhook-timestamp']) - 1) }), false);
      assert.equal(verifies(secret, { ...delivery!, body: body.replace('record.created', 'record.closed') }), false);
      assert.equal(verifies(`whsec_${randomBytes(32).toString('base64')}`, delivery!), false);
    });

    it('stamps each attempt with its own time, so a retry verifies while a capture replayed after five minutes does not', async () => {
      const tenant = await t.newTenant();
      const hook = await receiver((_r, i) => (i === 0 ? { status: 503 } : { status: 204 }));
      const { secret } = await subscribe(tenant, hook.url);
      await createRecord(tenant);
      const [first, second] = await waitFor(() => (hook.received.length >= 2 ? hook.received : undefined), 10_000, 'the retry');
      assert.equal(first!.headers['webhook-id'], second!.headers['webhook-id']);
      assert.ok(Number(second!.headers['webhook-timestamp']) >= Number(first!.headers['webhook-timestamp']));
      assert.ok(verifies(secret, first!) && verifies(secret, second!));

      // The library refuses a timestamp more than 5 minutes old: what a replayed capture looks like.
      const now = Date.now;
      Date.now = () => now() + 6 * 60_000;
      try {
        assert.throws(() => new Webhook(secret).verify(second!.body, standardHeaders(second!)), /timestamp too old/);
      } finally {
        Date.now = now;
      }
    });

    it('adds the previous secret’s signature as a second v1 entry during a rotation overlap, and drops it when the overlap ends', async () => {
      const tenant = await t.newTenant();
      const hook = await receiver();
      const { id, secret: oldSecret } = await subscribe(tenant, hook.url);
      const rotated = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/rotate-secret`, payload: { overlapSeconds: 3600 } });
      const newSecret = rotated.json().secret as string;
      await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/ping` });
      const during = await waitFor(() => hook.received[0], 10_000, 'the ping during the overlap');
      assert.equal((during.headers['webhook-signature'] as string).split(' ').length, 2);
      assert.match(during.headers['webhook-signature'] as string, /^v1,\S+ v1,\S+$/);
      assert.ok(verifies(newSecret, during), 'a receiver holding the new secret accepts it');
      assert.ok(verifies(oldSecret, during), 'a receiver still holding the old secret accepts it');

      const ended = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/rotate-secret`, payload: { overlapSeconds: 0 } });
      const latest = ended.json().secret as string;
      await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/ping` });
      const afterwards = await waitFor(() => hook.received[1], 10_000, 'the ping after the overlap');
      assert.equal((afterwards.headers['webhook-signature'] as string).split(' ').length, 1);
      assert.ok(verifies(latest, afterwards));
      assert.equal(verifies(newSecret, afterwards), false);
    });

    it('signs for a secret issued in base64url with the same key bytes, verifiable after the documented one-line conversion', async () => {
      const tenant = await t.newTenant();
      const hook = await receiver();
      const { id } = await subscribe(tenant, hook.url);
      // A secret as they were issued before: base64url, here one that uses both URL-safe characters.
      let legacy: string;
      do legacy = `whsec_${randomBytes(32).toString('base64url')}`;
      while (!/-/.test(legacy) || !/_/.test(legacy.slice(6)));
      const box = SecretBox.fromConfig({ secretKey: t.config.webhooks.secretKey, keysDir: t.config.keysDir });
      await t.context.database.db.updateTable('webhook_subscriptions').set({ secret_ciphertext: box.seal(legacy, id) }).where('id', '=', id).execute();

      await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/ping` });
      const ping = await waitFor(() => hook.received[0], 10_000, 'the ping');
      assert.throws(() => new Webhook(legacy), /base64|Base64/, 'the library refuses base64url as it is');
      assert.ok(verifies(fromBase64Url(legacy), ping));
      assert.equal(verifyWebhookSignature(legacy, ping.body, ping.headers['x-webhook-signature'] as string), true, 'the contract signature still uses the secret as it is');
    });
  });
}
