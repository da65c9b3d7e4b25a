import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { verify } from '@octokit/webhooks-methods';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, waitFor, type TestApp, type Tenant } from '../helpers/test-app.js';
import { startReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { verifyWebhookSignature } from '../../src/webhooks/signature.js';
import { USER_AGENT } from '../../src/webhooks/send-delivery.js';
import { outboxProgressOf } from '../helpers/outbox.js';
import { createContext } from '../../src/context.js';
import { pino } from 'pino';

// Generous for a loaded CI machine: an answer slower than this is retried, which some tests must not see.
const TIMEOUT_MS = 1500;

interface DeliveryView {
  id: string;
  eventId: string;
  event: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  attempts: { attempt: number; startedAt: string; durationMs: number; statusCode: number | null; error: string | null; responseExcerpt: string | null }[];
}

async function subscribe(tenant: Tenant, url: string, events: string[]): Promise<{ id: string; secret: string }> {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/webhooks', payload: { name: 'test receiver', url, events } });
  assert.equal(response.statusCode, 201, response.body);
  return response.json();
}

async function deliveries(tenant: Tenant, webhookId: string, query = ''): Promise<DeliveryView[]> {
  const response = await tenant.request({ method: 'GET', url: `/api/v1/webhooks/${webhookId}/deliveries${query}` });
  assert.equal(response.statusCode, 200, response.body);
  return response.json().deliveries;
}

/** Waits until every delivery of the subscription is final and there are `count` of them. */
async function settled(tenant: Tenant, webhookId: string, count: number): Promise<DeliveryView[]> {
  return waitFor(
    async () => {
      const list = await deliveries(tenant, webhookId, '?limit=100');
      return list.length === count && list.every((d) => d.status === 'succeeded' || d.status === 'failed') ? list : undefined;
    },
    15_000,
    `${count} settled deliveries`,
  );
}

async function createRecord(tenant: Tenant, overrides: Record<string, unknown> = {}): Promise<{ id: string }> {
  const categoryId = await seedCategory(tenant);
  const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, overrides) });
  assert.equal(response.statusCode, 201, response.body);
  return response.json();
}

async function act(tenant: Tenant, recordId: string, action: string, payload: Record<string, unknown> = {}): Promise<void> {
  const response = await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/${action}`, payload });
  assert.equal(response.statusCode, 200, response.body);
}

for (const dialect of TEST_DIALECTS) {
  describe(`webhook deliveries (${dialect})`, () => {
    let t: TestApp;
    const receivers: WebhookReceiver[] = [];
    const receiver = async (answer?: WebhookReceiver['answer']) => {
      const r = await startReceiver(answer);
      receivers.push(r);
      return r;
    };

    before(async () => {
      t = await startTestApp(dialect, {
        env: {
          WO_WEBHOOK_RETRY_BASE_MS: '50',
          WO_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
          WO_WEBHOOK_IDLE_POLL_MS: '10',
          WO_WEBHOOK_CONCURRENCY: '4',
          WO_WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: '2',
        },
      });
      for (const job of t.context.backgroundJobs) job.start();
    });
    after(async () => {
      await t.close();
      await Promise.all(receivers.map((r) => r.close()));
    });

    it('posts record.created signed with the secret, with exactly the contract’s headers and envelope', async () => {
      const tenant = await t.newTenant();
      const hook = await receiver();
      const { secret } = await subscribe(tenant, hook.url, ['record.created']);
      const record = await createRecord(tenant);
      const [delivery] = await waitFor(() => (hook.received.length > 0 ? hook.received : undefined), 10_000, 'the delivery');
      const { headers, body, json } = delivery!;

      assert.equal(headers['content-type'], 'application/json');
      assert.equal(headers['x-webhook-event'], 'record.created');
      assert.match(headers['x-webhook-id'] as string, /^evt_[0-9A-Z]{26}$/);
      assert.equal(headers['user-agent'], USER_AGENT);
      assert.match(headers['x-webhook-signature'] as string, /^sha256=[0-9a-f]{64}$/);
      assert.equal(headers['x-webhook-signature-previous'], undefined);
      // An independent implementation of the same scheme, and our own constant-time check.
      assert.equal(await verify(secret, body, headers['x-webhook-signature'] as string), true);
      assert.equal(verifyWebhookSignature(secret, body, headers['x-webhook-signature'] as string), true);
      assert.equal(verifyWebhookSignature('whsec_wrong', body, headers['x-webhook-signature'] as string), false);

      assert.deepEqual(Object.keys(json), ['event', 'payload', 'timestamp']);
      assert.equal(json.event, 'record.created');
      assert.match(json.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(json.payload.recordId, record.id);
      assert.equal((json.payload.record as { id: string }).id, record.id);
      assert.ok(Number.isInteger(json.payload.sequence));
      const outbox = await t.context.database.db.selectFrom('outbox_events').select(['id', 'created_at']).where('id', '=', headers['x-webhook-id'] as string).executeTakeFirstOrThrow();
      assert.equal(json.timestamp, outbox.created_at);
    });

    it('delivers every event of the record lifecycle from the operation that causes it', async () => {
      const tenant = await t.newTenant();
      const hook = await receiver();
      const events = ['record.created', 'record.assigned', 'record.status_changed', 'record.updated', 'record.completed', 'record.closed'];
      const { secret } = await subscribe(tenant, hook.url, events);

      const record = await createRecord(tenant, { assignee: 'Team A' }); // created + assigned
      await act(tenant, record.id, 'assign', { assignee: 'Team B' }); // assigned (reassign)
      const patched = await tenant.request({ method: 'PATCH', url: `/api/v1/records/${record.id}`, payload: { description: 'Tap and pipe leak' } });
      assert.equal(patched.statusCode, 200); // updated
      await act(tenant, record.id, 'start'); // status_changed ASSIGNED → IN_PROGRESS
      await act(tenant, record.id, 'complete', { resolutionNotes: 'Replaced the washer' }); // status_changed + completed
      await act(tenant, record.id, 'close'); // status_changed + closed

      // Generic fan-out check: every event the outbox holds for this organization reaches the receiver once.
      // (Events it does not list, such as record.proof_delivered after the completion, are not sent to it.)
      const emitted = await t.context.database.db
        .selectFrom('outbox_events')
        .select(['id', 'type', 'seq'])
        .where('org_id', '=', tenant.orgId)
        .where('type', 'in', events)
        .orderBy('seq')
        .execute();
      assert.ok(emitted.length >= 9);
      // At least once: a slow answer may be retried, so count distinct X-Webhook-Id values.
      const distinct = () => new Map(hook.received.map((r) => [r.headers['x-webhook-id'] as string, r]));
      await waitFor(() => distinct().size >= emitted.length, 10_000, 'all lifecycle events');
      assert.deepEqual([...distinct().keys()].sort(), emitted.map((e) => e.id).sort());
      for (const r of hook.received) {
        assert.equal(r.headers['x-webhook-event'], r.json.event);
        assert.equal(verifyWebhookSignature(secret, r.body, r.headers['x-webhook-signature'] as string), true);
        const event = emitted.find((e) => e.id === r.headers['x-webhook-id'])!;
        assert.equal(r.json.event, event.type);
        assert.equal(r.json.payload.sequence, Number(event.seq));
        assert.equal(r.json.payload.recordId, record.id);
      }
      assert.deepEqual([...new Set(hook.received.map((r) => r.json.event))].sort(), [...events].sort());

      const received = [...distinct().values()];
      const ofEvent = (event: string) => received.filter((r) => r.json.event === event);
      const transitions = ofEvent('record.status_changed').map((r) => r.json.payload).sort((a, b) => (a.sequence as number) - (b.sequence as number));
      assert.deepEqual(
        transitions.map((p) => [p.from, p.to]),
        [['ASSIGNED', 'IN_PROGRESS'], ['IN_PROGRESS', 'COMPLETED'], ['COMPLETED', 'CLOSED']],
      );
      for (const payload of transitions) assert.equal(typeof payload.recordId, 'string');
      assert.deepEqual(ofEvent('record.assigned').map((r) => r.json.payload.assignee).sort(), ['Team A', 'Team B']);
      assert.equal(ofEvent('record.completed')[0]!.json.payload.resolutionNotes, 'Replaced the washer');
      assert.deepEqual((ofEvent('record.updated')[0]!.json.payload.changes as Record<string, unknown>).description, { from: 'Kitchen tap leaks', to: 'Tap and pipe leak' });
    });

    it('sends a subscription only the events it lists, only from its own organization, and nothing while inactive', async () => {
      const tenant = await t.newTenant();
      const stranger = await t.newTenant();
      const closedOnly = await receiver();
      const createdOnly = await receiver();
      const paused = await receiver();
      await subscribe(tenant, closedOnly.url, ['record.closed']);
      await subscribe(tenant, createdOnly.url, ['record.created']);
      const inactive = await subscribe(tenant, paused.url, ['record.created']);
      await tenant.request({ method: 'PATCH', url: `/api/v1/webhooks/${inactive.id}`, payload: { active: false } });

      await createRecord(stranger);
      const mine = await createRecord(tenant);
      await waitFor(() => createdOnly.received.length >= 1, 10_000, 'record.created');
      // The outbox is drained in order: once this org's event is out, the stranger's (earlier) one was handled too.
      await waitFor(async () => {
        return (await outboxProgressOf(t.context.database).pendingCount(t.context.database.db)) === 0;
      });
      // Distinct ids: under load a slow answer may legitimately be retried (at least once).
      assert.deepEqual([...new Set(createdOnly.received.map((r) => r.json.payload.recordId))], [mine.id]);
      assert.equal(closedOnly.received.length, 0);
      assert.equal(paused.received.length, 0);
      assert.equal((await deliveries(tenant, inactive.id)).length, 0);
    });

    it('retries a 500 and succeeds on attempt 2 with the same id and the same bytes', async () => {
      const tenant = await t.newTenant();
      const hook = await receiver((_r, i) => (i === 0 ? { status: 500, body: 'database down' } : { status: 200, body: 'ok' }));
      const { id, secret } = await subscribe(tenant, hook.url, ['record.created']);
      await createRecord(tenant);
      const [delivery] = await settled(tenant, id, 1);
      assert.equal(delivery!.status, 'succeeded');
      assert.equal(delivery!.attemptCount, 2);
      assert.deepEqual(delivery!.attempts.map((a) => a.statusCode), [500, 200]);
      assert.match(delivery!.attempts[0]!.error!, /500/);
      assert.equal(hook.received.length, 2);
      const [first, second] = hook.received as [ReceivedWebhook, ReceivedWebhook];
      assert.equal(first.headers['x-webhook-id'], second.headers['x-webhook-id']);
      assert.equal(first.body, second.body);
      assert.equal(verifyWebhookSignature(secret, second.body, second.headers['x-webhook-signature'] as string), true);
    });

    it('waits as long as a 429’s Retry-After asks before trying again', async () => {
      const tenant = await t.newTenant();
      const hook = await receiver((_r, i) => (i === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 204 }));
      const { id } = await subscribe(tenant, hook.url, ['record.created']);
      await createRecord(tenant);
      const pending = await waitFor(async () => (await deliveries(tenant, id)).find((d) => d.status === 'pending' && d.attemptCount === 1), 10_000, 'the retry to be scheduled');
      const firstStarted = Date.parse(pending.attempts[0]!.startedAt);
      // Backoff alone would be 50 ms ± 20 %; Retry-After: 1 makes it at least a second.
      assert.ok(Date.parse(pending.nextAttemptAt!) - firstStarted >= 1000, `next attempt at ${pending.nextAttemptAt}, first at ${pending.attempts[0]!.startedAt}`);
      const [done] = await settled(tenant, id, 1);
      assert.deepEqual(done!.attempts.map((a) => a.statusCode), [429, 204]);
      assert.ok(hook.received[1]!.receivedAt - hook.received[0]!.receivedAt >= 900);
    });

    it('gives up after one attempt on 400 and on 410', async () => {
      const tenant = await t.newTenant();
      const badRequest = await receiver(() => ({ status: 400, body: 'schema mismatch' }));
      const gone = await receiver(() => ({ status: 410 }));
      const a = await subscribe(tenant, badRequest.url, ['record.created']);
      const b = await subscribe(tenant, gone.url, ['record.created']);
      await createRecord(tenant);
      for (const [sub, code] of [[a, 400], [b, 410]] as const) {
        const [delivery] = await settled(tenant, sub.id, 1);
        assert.equal(delivery!.status, 'failed');
        assert.equal(delivery!.attemptCount, 1);
        assert.equal(delivery!.attempts.length, 1);
        assert.equal(delivery!.lastStatusCode, code);
      }
      assert.equal(badRequest.received.length, 1);
      assert.equal(gone.received.length, 1);
      assert.equal((await deliveries(tenant, a.id))[0]!.attempts[0]!.statusCode, 400);
    });

    it('keeps the start of the receiver’s answer with each attempt, at most 1 KiB of it, however long the answer', async () => {
      const tenant = await t.newTenant();
      const long = 'x'.repeat(64 * 1024);
      const hook = await receiver((_r, i) => (i === 0 ? { status: 500, body: long } : { status: 200, body: '{"ok":true}' }));
      const { id } = await subscribe(tenant, hook.url, ['record.created']);
      await createRecord(tenant);
      const [delivery] = await settled(tenant, id, 1);
      assert.equal(delivery!.status, 'succeeded');
      assert.deepEqual(delivery!.attempts.map((a) => a.statusCode), [500, 200]);
      assert.equal(delivery!.attempts[0]!.responseExcerpt, long.slice(0, 1024));
      assert.equal(delivery!.attempts[1]!.responseExcerpt, '{"ok":true}');
    });

    it('keeps an answer with NUL bytes, or a character cut in half at 1 KiB, as text either database can store', async () => {
      const tenant = await t.newTenant();
      // 1,023 characters, then an emoji (two UTF-16 units) that the 1,024-unit excerpt cuts in half.
      const cut = `${'y'.repeat(1023)}\u{1F600}tail`;
      const hook = await receiver((_r, i) => (i === 0 ? { status: 500, body: 'bad\u0000answer' } : i === 1 ? { status: 503, body: cut } : { status: 200 }));
      const { id } = await subscribe(tenant, hook.url, ['record.created']);
      await createRecord(tenant);
      const [delivery] = await settled(tenant, id, 1);
      assert.equal(delivery!.status, 'succeeded');
      assert.deepEqual(delivery!.attempts.map((a) => a.statusCode), [500, 503, 200]);
      assert.equal(delivery!.attempts[0]!.responseExcerpt, 'bad\uFFFDanswer');
      assert.equal(delivery!.attempts[1]!.responseExcerpt, `${'y'.repeat(1023)}\uFFFD`);
    });

    it('retries when the receiver does not answer within the time-out', async () => {
      const tenant = await t.newTenant();
      const hook = await receiver((_r, i) => (i === 0 ? 'hang' : { status: 200 }));
      const { id } = await subscribe(tenant, hook.url, ['record.created']);
      await createRecord(tenant);
      const [delivery] = await settled(tenant, id, 1);
      assert.equal(delivery!.status, 'succeeded');
      assert.equal(delivery!.attemptCount, 2);
      assert.equal(delivery!.attempts[0]!.statusCode, null);
      assert.match(delivery!.attempts[0]!.error!, new RegExp(`within ${TIMEOUT_MS} ms`));
      assert.ok(delivery!.attempts[0]!.durationMs >= TIMEOUT_MS - 50);
    });

    it('marks a delivery failed after 4 failed attempts and never makes a 5th', async () => {
      const tenant = await t.newTenant();
      const hook = await receiver(() => ({ status: 503 }));
      const { id } = await subscribe(tenant, hook.url, ['record.created']);
      await createRecord(tenant);
      const [delivery] = await settled(tenant, id, 1);
      assert.equal(delivery!.status, 'failed');
      assert.equal(delivery!.attemptCount, 4);
      assert.deepEqual(delivery!.attempts.map((a) => a.attempt), [1, 2, 3, 4]);
      assert.deepEqual(delivery!.attempts.map((a) => a.statusCode), [503, 503, 503, 503]);
      assert.equal(hook.received.length, 4);
      const row = await t.context.database.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', delivery!.id).executeTakeFirstOrThrow();
      assert.equal(row.next_attempt_at, null);
      assert.ok(row.completed_at);
    });

    it('does not follow redirects: a 3xx is a failed attempt', async () => {
      const tenant = await t.newTenant();
      const elsewhere = await receiver();
      const hook = await receiver((_r, i) => (i === 0 ? { status: 302, headers: { location: elsewhere.url } } : { status: 200 }));
      const { id } = await subscribe(tenant, hook.url, ['record.created']);
      await createRecord(tenant);
      const [delivery] = await settled(tenant, id, 1);
      assert.deepEqual(delivery!.attempts.map((a) => a.statusCode), [302, 200]);
      assert.equal(elsewhere.received.length, 0);
    });

    it('records a refused connection as a network error, and retries it', async () => {
      const tenant = await t.newTenant();
      // A port that was just free: nothing listens there.
      const probe = net.createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const port = (probe.address() as net.AddressInfo).port;
      await new Promise((resolve) => probe.close(resolve));
      const { id } = await subscribe(tenant, `http://127.0.0.1:${port}/hook`, ['record.created']);
      await createRecord(tenant);
      const retried = await waitFor(async () => (await deliveries(tenant, id)).find((d) => d.attemptCount >= 2), 10_000, 'a second attempt');
      for (const attempt of retried.attempts.slice(0, 2)) {
        assert.equal(attempt.statusCode, null);
        assert.match(attempt.error!, /^network error ECONNREFUSED/);
      }
    });

    it('sends a signed webhook.ping through the delivery pipeline', async () => {
      const tenant = await t.newTenant();
      const hook = await receiver();
      const { id, secret } = await subscribe(tenant, hook.url, ['record.closed']);
      const ping = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/ping` });
      assert.equal(ping.statusCode, 202);
      assert.equal(ping.json().event, 'webhook.ping');
      const [delivery] = await settled(tenant, id, 1);
      assert.equal(delivery!.id, ping.json().id);
      assert.equal(delivery!.status, 'succeeded');
      const received = hook.received[0]!;
      assert.equal(received.headers['x-webhook-event'], 'webhook.ping');
      assert.equal(received.json.payload.webhookId, id);
      assert.equal(await verify(secret, received.body, received.headers['x-webhook-signature'] as string), true);
    });

    it('signs with the new secret after a rotation, and with the old one too during the overlap', async () => {
      const tenant = await t.newTenant();
      const hook = await receiver();
      const { id, secret: oldSecret } = await subscribe(tenant, hook.url, ['record.created']);
      const rotated = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/rotate-secret`, payload: { overlapSeconds: 3600 } });
      const newSecret = rotated.json().secret as string;
      await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/ping` });
      await waitFor(() => hook.received.length >= 1, 10_000, 'the ping');
      const during = hook.received[0]!;
      assert.equal(await verify(newSecret, during.body, during.headers['x-webhook-signature'] as string), true);
      assert.equal(verifyWebhookSignature(oldSecret, during.body, during.headers['x-webhook-signature-previous'] as string), true);
      // A receiver that still holds only the old secret keeps verifying: it checks either header.
      const acceptsWith = (secret: string, r: ReceivedWebhook) =>
        [r.headers['x-webhook-signature'], r.headers['x-webhook-signature-previous']].some((h) => verifyWebhookSignature(secret, r.body, h as string | undefined));
      assert.ok(acceptsWith(oldSecret, during) && acceptsWith(newSecret, during));

      const ended = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/rotate-secret`, payload: { overlapSeconds: 0 } });
      const latest = ended.json().secret as string;
      await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/ping` });
      await waitFor(() => hook.received.length >= 2, 10_000, 'the second ping');
      const afterwards = hook.received[1]!;
      assert.equal(verifyWebhookSignature(latest, afterwards.body, afterwards.headers['x-webhook-signature'] as string), true);
      assert.equal(afterwards.headers['x-webhook-signature-previous'], undefined);
      assert.equal(acceptsWith(newSecret, afterwards), false);
    });

    it('redelivers a finished delivery with the same id and body, and refuses while one is still pending', async () => {
      const tenant = await t.newTenant();
      let accept = false;
      const hook = await receiver(() => (accept ? { status: 200 } : { status: 400 }));
      const { id } = await subscribe(tenant, hook.url, ['record.created']);
      await createRecord(tenant);
      const [failed] = await settled(tenant, id, 1);
      assert.equal(failed!.status, 'failed');

      accept = true;
      const redelivered = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/deliveries/${failed!.id}/redeliver` });
      assert.equal(redelivered.statusCode, 202);
      assert.notEqual(redelivered.json().id, failed!.id);
      assert.equal(redelivered.json().eventId, failed!.eventId);
      const list = await settled(tenant, id, 2);
      assert.equal(list.find((d) => d.id === redelivered.json().id)!.status, 'succeeded');
      assert.equal(hook.received.length, 2);
      assert.equal(hook.received[1]!.headers['x-webhook-id'], hook.received[0]!.headers['x-webhook-id']);
      assert.equal(hook.received[1]!.body, hook.received[0]!.body);

      const missing = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/deliveries/dlv_01JD3Q4W8Y6V3C0M2ZP4K7N9XA/redeliver` });
      assert.equal(missing.statusCode, 404);
      const stranger = await t.newTenant();
      assert.equal((await stranger.request({ method: 'POST', url: `/api/v1/webhooks/${id}/deliveries/${failed!.id}/redeliver` })).statusCode, 404);

      hook.answer = () => 'hang';
      const again = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/deliveries/${failed!.id}/redeliver` });
      const conflict = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/deliveries/${again.json().id}/redeliver` });
      assert.equal(conflict.statusCode, 409);
    });

    it('lists deliveries newest first with paging, a status filter and every attempt', async () => {
      const tenant = await t.newTenant();
      const hook = await receiver((r) => (r.json.payload.record as { description: string }).description === 'fail me' ? { status: 422 } : { status: 200 });
      const { id } = await subscribe(tenant, hook.url, ['record.created']);
      const categoryId = await seedCategory(tenant);
      for (const description of ['one', 'fail me', 'three']) {
        await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { description }) });
      }
      await settled(tenant, id, 3);
      const page = await tenant.request({ method: 'GET', url: `/api/v1/webhooks/${id}/deliveries?limit=2&offset=0` });
      const body = page.json();
      assert.deepEqual(Object.keys(body).sort(), ['deliveries', 'limit', 'offset', 'total']);
      assert.equal(body.total, 3);
      assert.equal(body.deliveries.length, 2);
      const failed = await deliveries(tenant, id, '?status=failed');
      assert.equal(failed.length, 1);
      const attempt = failed[0]!.attempts[0]!;
      assert.equal(attempt.statusCode, 422);
      assert.ok(Date.parse(attempt.startedAt) > 0);
      assert.ok(Number.isInteger(attempt.durationMs));
      assert.match(attempt.error!, /422/);
      assert.equal((await deliveries(tenant, id, '?status=succeeded')).length, 2);
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/webhooks/${id}/deliveries?status=lost` })).statusCode, 400);
      const one = await tenant.request({ method: 'GET', url: `/api/v1/webhooks/${id}/deliveries/${failed[0]!.id}` });
      assert.equal(one.json().id, failed[0]!.id);
    });

    it('keeps a slow receiver from delaying the others', async () => {
      const tenant = await t.newTenant();
      const slow = await receiver(() => 'hang');
      const fast = await receiver();
      const slowSub = await subscribe(tenant, slow.url, ['record.created']);
      await subscribe(tenant, fast.url, ['record.created']);
      const categoryId = await seedCategory(tenant);
      for (let i = 0; i < 8; i++) await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) });
      // Concurrency 4, at most 2 per subscription: the hanging receiver never holds more than its 2 slots.
      await waitFor(() => fast.received.length >= 8, 10_000, 'the fast receiver’s deliveries');
      assert.ok(slow.maxInFlight <= 2, `slow receiver had ${slow.maxInFlight} requests open at once`);
      await tenant.request({ method: 'DELETE', url: `/api/v1/webhooks/${slowSub.id}` });
    });

    if (dialect === 'postgres') {
      it('lets a second worker process share the outbox and the deliveries without sending any event twice', async () => {
        const second = await createContext(t.config, { logger: pino({ level: 'silent' }), databaseSchema: t.context.database.schema!, migrate: false });
        for (const job of second.backgroundJobs) job.start();
        try {
          const tenant = await t.newTenant();
          const hook = await receiver();
          const { id } = await subscribe(tenant, hook.url, ['record.created']);
          const categoryId = await seedCategory(tenant);
          const records = 30;
          for (let i = 0; i < records; i++) await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) });
          const list = await settled(tenant, id, records);
          assert.ok(list.every((d) => d.status === 'succeeded' && d.attemptCount === 1));
          // SKIP LOCKED: each event fanned out once, each delivery sent by one worker.
          assert.equal(new Set(list.map((d) => d.eventId)).size, records);
          assert.equal(hook.received.length, records);
        } finally {
          await second.close();
        }
      });
    }

    it('counts deliveries by outcome and attempt latency in the Prometheus metrics', async () => {
      const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(metrics, /wo_webhook_deliveries_total\{outcome="succeeded"\} [1-9]/);
      assert.match(metrics, /wo_webhook_deliveries_total\{outcome="failed"\} [1-9]/);
      assert.match(metrics, /wo_webhook_attempt_duration_seconds_count\{result="success"\} [1-9]/);
      assert.match(metrics, /wo_webhook_attempts_total\{result="retry"\} [1-9]/);
    });
  });

  describe(`webhook delivery-time URL guard (${dialect})`, () => {
    let t: TestApp;
    let hook: WebhookReceiver;
    before(async () => {
      t = await startTestApp(dialect, { env: { WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'false', WO_WEBHOOK_IDLE_POLL_MS: '10', WO_WEBHOOK_TIMEOUT_MS: '1000' } });
      for (const job of t.context.backgroundJobs) job.start();
      hook = await startReceiver();
    });
    after(async () => {
      await t.close();
      await hook.close();
    });

    it('refuses to send when the host now resolves to a private address (DNS rebinding), or the URL is a private literal', async () => {
      const tenant = await t.newTenant();
      const port = new URL(hook.url).port;
      const byName = await subscribe(tenant, 'https://93.184.216.34/hook', ['record.created']);
      const byLiteral = await subscribe(tenant, 'https://93.184.216.35/hook', ['record.created']);
      const byCompatible = await subscribe(tenant, 'https://93.184.216.36/hook', ['record.created']);
      // The URLs were public when checked; now they lead to loopback, as a rebinding DNS answer would.
      await t.context.database.db.updateTable('webhook_subscriptions').set({ url: `http://localhost:${port}/hook` }).where('id', '=', byName.id).execute();
      await t.context.database.db.updateTable('webhook_subscriptions').set({ url: `http://127.0.0.1:${port}/hook` }).where('id', '=', byLiteral.id).execute();
      await t.context.database.db.updateTable('webhook_subscriptions').set({ url: `http://[::127.0.0.1]:${port}/hook` }).where('id', '=', byCompatible.id).execute();
      await createRecord(tenant);
      for (const sub of [byName, byLiteral, byCompatible]) {
        const [delivery] = await settled(tenant, sub.id, 1);
        assert.equal(delivery!.status, 'failed');
        assert.equal(delivery!.attemptCount, 1);
        assert.match(delivery!.attempts[0]!.error!, /URL guard/);
      }
      assert.equal(hook.received.length, 0);
    });
  });
}
