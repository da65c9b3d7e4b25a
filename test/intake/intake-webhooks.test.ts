// An integrator told of every request, as a real receiver on loopback sees it: request.created from the
// public form, then approved, rejected and cancelled (the last from the requester's own status page),
// each delivery signed and checked with `standardwebhooks`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { seedCategory, startTestApp, waitFor, type TestApp } from '../helpers/test-app.js';
import { receiverPool } from '../helpers/webhook-receiver.js';
import { createIntakeLink, formFields, postForm, solvedChallenge, statusPathOf } from './intake-helpers.js';

const REQUEST_EVENTS = ['request.created', 'request.approved', 'request.rejected', 'request.cancelled'];

for (const dialect of TEST_DIALECTS) {
  describe(`request events reach the webhooks (${dialect})`, () => {
    let t: TestApp;
    const receivers = receiverPool();

    before(async () => {
      t = await startTestApp(dialect, { env: { WO_WEBHOOK_RETRY_BASE_MS: '50', WO_WEBHOOK_IDLE_POLL_MS: '10' } });
      for (const job of t.context.backgroundJobs) job.start();
    });
    after(async () => {
      await t.close();
      await receivers.closeAll();
    });

    it('delivers request.created, .approved, .rejected and .cancelled, signed, with the request in each', async () => {
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      const hook = await receivers.start();
      const subscribed = await tenant.request({ method: 'POST', url: '/api/v1/webhooks', payload: { name: 'tenant messaging', url: hook.url, events: REQUEST_EVENTS } });
      assert.equal(subscribed.statusCode, 201, subscribed.body);
      const { secret } = subscribed.json() as { secret: string };
      const link = await createIntakeLink(tenant, { name: 'Lobby', categoryId });

      const statusPaths: string[] = [];
      for (const description of ['Leak in the lobby ceiling', 'Repaint the lobby', 'Lobby light out']) {
        statusPaths.push(statusPathOf(await postForm(t, link.token, formFields(await solvedChallenge(t, link.token), { description, requesterEmail: 'tess@example.com' }))));
      }
      const requests = (await tenant.request({ method: 'GET', url: '/api/v1/requests' })).json().requests as { id: string; description: string }[];
      const idOf = (prefix: string) => requests.find((r) => r.description.startsWith(prefix))!.id;
      const approved = (await tenant.request({ method: 'POST', url: `/api/v1/requests/${idOf('Leak')}/approve`, payload: {} })).json();
      assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/requests/${idOf('Repaint')}/reject`, payload: { reason: 'Not a repair' } })).statusCode, 200);
      const cancel = await t.app.inject({ method: 'POST', url: `${statusPaths[2]}/cancel` });
      assert.equal(cancel.statusCode, 303, cancel.body);

      await waitFor(() => hook.received.length >= 6, 15_000, 'six request deliveries');
      for (const delivery of hook.received) {
        const headers = { 'webhook-id': String(delivery.headers['webhook-id']), 'webhook-timestamp': String(delivery.headers['webhook-timestamp']), 'webhook-signature': String(delivery.headers['webhook-signature']) };
        assert.deepEqual(new Webhook(secret).verify(delivery.body, headers), JSON.parse(delivery.body), 'signed');
      }
      const created = hook.ofEvent('request.created');
      assert.equal(created.length, 3);
      for (const delivery of created) {
        const request = delivery.json.payload.request as { channel: string; intakeLinkId: string; requesterEmail: string };
        assert.equal(request.channel, 'intake');
        assert.equal(request.intakeLinkId, link.id);
        assert.equal(request.requesterEmail, 'tess@example.com', 'enough to tell the requester');
      }
      const [approval] = hook.ofEvent('request.approved');
      assert.equal(approval!.json.payload.requestId, idOf('Leak'));
      assert.equal(approval!.json.payload.recordId, approved.recordId);
      const [rejection] = hook.ofEvent('request.rejected');
      assert.equal(rejection!.json.payload.reason, 'Not a repair');
      const [cancellation] = hook.ofEvent('request.cancelled');
      assert.equal(cancellation!.json.payload.requestId, idOf('Lobby light'));
      assert.equal((cancellation!.json.payload.request as { status: string }).status, 'CANCELLED');
    });
  });
}
