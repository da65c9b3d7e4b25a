// The admin area's webhook and event pages over app.inject, on SQLite and PostgreSQL: what they show,
// redelivery through the API's own path, and that one organization's pages never reach another's.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { createWorkOrder, startTestApp, waitFor, type TestApp, type Tenant } from '../helpers/test-app.js';
import { receiverPool } from '../helpers/webhook-receiver.js';
import { AdminBrowser, createAdmin } from './admin-client.js';

interface DeliveryView {
  id: string;
  eventId: string;
  event: string;
  status: string;
  attempts: { statusCode: number | null; durationMs: number; responseExcerpt: string | null }[];
}

async function subscribe(tenant: Tenant, url: string, name: string): Promise<string> {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/webhooks', payload: { name, url, events: ['record.created', 'record.assigned'] } });
  assert.equal(response.statusCode, 201, response.body);
  return response.json().id as string;
}

async function deliveriesOf(tenant: Tenant, webhookId: string): Promise<DeliveryView[]> {
  const response = await tenant.request({ method: 'GET', url: `/api/v1/webhooks/${webhookId}/deliveries?limit=100` });
  assert.equal(response.statusCode, 200, response.body);
  return response.json().deliveries as DeliveryView[];
}

/** Waits until the subscription has `count` deliveries, all finished. */
function settled(tenant: Tenant, webhookId: string, count: number): Promise<DeliveryView[]> {
  return waitFor(
    async () => {
      const list = await deliveriesOf(tenant, webhookId);
      return list.length === count && list.every((d) => d.status === 'succeeded' || d.status === 'failed') ? list : undefined;
    },
    15_000,
    `${count} finished deliveries`,
  );
}

for (const dialect of TEST_DIALECTS) {
  describe(`admin webhook deliveries and event log over HTTP (${dialect})`, () => {
    let t: TestApp;
    const receivers = receiverPool();
    let ours: Tenant;
    let theirs: Tenant;
    let ourHook: string;
    let theirHook: string;
    let ourRecord: string;
    let theirRecord: string;
    let ourDelivery: DeliveryView;
    let theirDelivery: DeliveryView;
    let browser: AdminBrowser;

    before(async () => {
      t = await startTestApp(dialect, { env: { WO_WEBHOOK_RETRY_BASE_MS: '50', WO_WEBHOOK_IDLE_POLL_MS: '10' } });
      for (const job of t.context.backgroundJobs) job.start();
      await createAdmin(t);
      // The first answer to each subscription is a 500, so its first delivery takes two attempts.
      const answer = (_request: unknown, index: number) => (index === 0 ? { status: 500, body: 'busy, try later' } : { status: 200, body: '{"received":true}' });
      ours = await t.newTenant();
      theirs = await t.newTenant();
      ourHook = await subscribe(ours, (await receivers.start(answer)).url, 'Our ERP');
      theirHook = await subscribe(theirs, (await receivers.start(answer)).url, 'Their ERP');
      ourRecord = await createWorkOrder(ours);
      theirRecord = await createWorkOrder(theirs);
      ourDelivery = (await settled(ours, ourHook, 1))[0]!;
      theirDelivery = (await settled(theirs, theirHook, 1))[0]!;
      browser = new AdminBrowser(t);
      await browser.signIn();
    });
    after(async () => {
      await t.close();
      await receivers.closeAll();
    });

    it('lists an organization’s subscriptions, each with an SVG chart of its last 24 hours that has a title, a description and a table', async () => {
      const page = await browser.get(`/admin/organizations/${ours.orgId}/webhooks`);
      assert.equal(page.statusCode, 200, page.body);
      assert.match(page.body, /Our ERP/);
      assert.doesNotMatch(page.body, /Their ERP/);
      assert.match(page.body, new RegExp(`<svg class="chart-svg"[^>]* role="img" aria-labelledby="${ourHook}-chart-title ${ourHook}-chart-desc"`));
      assert.match(page.body, new RegExp(`<title id="${ourHook}-chart-title">Deliveries of “Our ERP” in the last 24 hours</title>`));
      assert.match(page.body, /<desc id="[^"]+">Top: the share of attempts/);
      assert.match(page.body, /Last 24 hours: 2 attempts, 1 answered 2xx \(50 %\); average latency \d+ ms, slowest \d+ ms\. No attempts in 23 of the 24 hours\./);
      assert.match(page.body, /<caption id="[^"]+">Attempts by hour \(UTC\)/);
      assert.match(page.body, /<td>2<\/td><td>1<\/td><td>50 %<\/td>/);
      assert.doesNotMatch(page.body, /<script>|\sstyle="|https?:\/\/(?!127\.0\.0\.1)/, 'no inline script or style, nothing from elsewhere');
    });

    it('counts each hour’s attempts, those answered 2xx and their latency, for the chart', async () => {
      const stats = await t.context.webhooks.deliveryStats(ours.orgId, ourHook);
      assert.equal(stats.hours.length, 24);
      const now = stats.hours[23]!;
      assert.equal(now.start.slice(0, 13), new Date().toISOString().slice(0, 13));
      assert.deepEqual([now.attempts, now.succeeded], [2, 1]);
      assert.ok(now.averageMs !== null && now.maxMs !== null && now.maxMs >= now.averageMs);
      assert.ok(stats.hours.slice(0, 23).every((hour) => hour.attempts === 0 && hour.averageMs === null));
    });

    it('shows a subscription’s deliveries with each attempt: answer, latency, time and the answer’s first bytes', async () => {
      const page = await browser.get(`/admin/organizations/${ours.orgId}/webhooks/${ourHook}`);
      assert.equal(page.statusCode, 200, page.body);
      assert.match(page.body, /<code>record\.created<\/code>/);
      assert.match(page.body, new RegExp(ourDelivery.eventId));
      assert.match(page.body, /#1 HTTP 500, \d+ ms,/);
      assert.match(page.body, /#2 HTTP 200, \d+ ms,/);
      assert.match(page.body, /busy, try later/);
      const failedOnly = await browser.get(`/admin/organizations/${ours.orgId}/webhooks/${ourHook}?status=failed`);
      assert.match(failedOnly.body, /No deliveries in this state\./);
      assert.equal((await browser.get(`/admin/organizations/${ours.orgId}/webhooks/${ourHook}?status=lost`)).statusCode, 400);

      const detail = await browser.get(`/admin/organizations/${ours.orgId}/webhooks/${ourHook}/deliveries/${ourDelivery.id}`);
      assert.equal(detail.statusCode, 200, detail.body);
      assert.match(detail.body, /<pre class="excerpt">busy, try later<\/pre>/);
      assert.match(detail.body, /<pre class="excerpt">\{&quot;received&quot;:true\}<\/pre>/);
      assert.match(detail.body, /<button type="submit">Redeliver<\/button>/);
    });

    it('redelivers through the API’s redelivery, with the same event id and body, and records it in the audit log', async () => {
      const url = `/admin/organizations/${ours.orgId}/webhooks/${ourHook}/deliveries/${ourDelivery.id}/redeliver`;
      const response = await browser.post(url, { _csrf: await browser.csrfToken() });
      assert.equal(response.statusCode, 303, response.body);
      const location = String(response.headers.location);
      const list = await settled(ours, ourHook, 2);
      const again = list.find((d) => d.id !== ourDelivery.id)!;
      assert.equal(location, `/admin/organizations/${ours.orgId}/webhooks/${ourHook}/deliveries/${again.id}?redeliveredFrom=${ourDelivery.id}`);
      assert.equal(again.eventId, ourDelivery.eventId);
      const page = await browser.get(location);
      assert.match(page.body, /Redelivery queued/);
      assert.match(page.body, /#1<\/th>/);
      const { entries } = await t.context.admin.listAudit(ours.orgId, { limit: 5, offset: 0 });
      const entry = entries.find((e) => e.action === 'webhook_delivery.redelivered');
      assert.equal(entry?.target, again.id);
      assert.deepEqual(entry?.details, { webhookId: ourHook, fromDeliveryId: ourDelivery.id, event: 'record.created', eventId: ourDelivery.eventId });
    });

    it('refuses a redelivery without the session’s CSRF token with 403, and queues nothing', async () => {
      const before = (await deliveriesOf(ours, ourHook)).length;
      const response = await browser.post(`/admin/organizations/${ours.orgId}/webhooks/${ourHook}/deliveries/${ourDelivery.id}/redeliver`, {});
      assert.equal(response.statusCode, 403);
      assert.equal((await deliveriesOf(ours, ourHook)).length, before);
      const signedOut = await new AdminBrowser(t).post(`/admin/organizations/${ours.orgId}/webhooks/${ourHook}/deliveries/${ourDelivery.id}/redeliver`, {});
      assert.equal(signedOut.statusCode, 401);
    });

    it('never shows or redelivers another organization’s subscription, delivery or event from an organization’s pages: 404', async () => {
      const theirsBefore = (await deliveriesOf(theirs, theirHook)).length;
      const oursBefore = (await deliveriesOf(ours, ourHook)).length;
      const csrf = await browser.csrfToken();
      const views = [
        `/admin/organizations/${ours.orgId}/webhooks/${theirHook}`,
        `/admin/organizations/${ours.orgId}/webhooks/${theirHook}/deliveries/${theirDelivery.id}`,
        `/admin/organizations/${ours.orgId}/webhooks/${ourHook}/deliveries/${theirDelivery.id}`,
        `/admin/organizations/${theirs.orgId}/webhooks/${ourHook}/deliveries/${ourDelivery.id}`,
      ];
      for (const url of views) {
        const page = await browser.get(url);
        assert.equal(page.statusCode, 404, url);
        assert.doesNotMatch(page.body, new RegExp(`${theirDelivery.eventId}|Their ERP|busy, try later`), url);
        const redeliver = await browser.post(`${url.includes('/deliveries/') ? url : `${url}/deliveries/${theirDelivery.id}`}/redeliver`, { _csrf: csrf });
        assert.equal(redeliver.statusCode, 404, `${url}/redeliver`);
      }
      assert.equal((await deliveriesOf(theirs, theirHook)).length, theirsBefore, 'nothing was queued for the other organization');
      assert.equal((await deliveriesOf(ours, ourHook)).length, oursBefore, 'nor through the other organization’s path');

      // The same look-up finds our own record's events.
      assert.match((await browser.get(`/admin/organizations/${ours.orgId}/events?id=${ourRecord}`)).body, /Matching events <span class="count">\([1-9]/);
      const theirRecordInOurLog = await browser.get(`/admin/organizations/${ours.orgId}/events?id=${theirRecord}`);
      assert.equal(theirRecordInOurLog.statusCode, 200);
      assert.match(theirRecordInOurLog.body, /No events match these filters\./);
      const theirEvent = await browser.get(`/admin/organizations/${ours.orgId}/events?id=${theirDelivery.eventId}`);
      assert.match(theirEvent.body, /No events match these filters\./);
      assert.doesNotMatch((await browser.get(`/admin/organizations/${ours.orgId}/events`)).body, new RegExp(theirRecord));
    });

    it('filters the event log by type, by a record’s or an event’s id and by time, newest first, in pages of 50', async () => {
      const tenant = await t.newTenant();
      const hook = await subscribe(tenant, (await receivers.start()).url, 'Paging');
      const records: string[] = [];
      for (let i = 0; i < 26; i++) records.push(await createWorkOrder(tenant, { assignee: `Team ${i}` }));
      // 26 × (record.created + record.assigned), and the categories' events; all in the feed once dispatched.
      await settled(tenant, hook, 52);
      const base = `/admin/organizations/${tenant.orgId}/events`;

      const all = await browser.get(base);
      assert.equal(all.statusCode, 200);
      const total = Number(/<h2 id="event-list-title">Events <span class="count">\((\d+)\)/.exec(all.body)![1]);
      assert.ok(total >= 52, String(total));
      assert.equal(all.body.match(/<tr>\s*<td><time/g)?.length, 50);
      assert.match(all.body, /href="[^"]*offset=50" rel="next">Older</);
      const second = await browser.get(`${base}?offset=50`);
      assert.equal(second.body.match(/<tr>\s*<td><time/g)?.length, total - 50);
      assert.match(second.body, /rel="prev">Newer</);

      const created = await browser.get(`${base}?type=record.created`);
      assert.match(created.body, /Matching events <span class="count">\(26\)/);
      assert.doesNotMatch(created.body, /<th scope="row"><code>record\.assigned<\/code>/);
      // Newest first: the last record created is the first row.
      const rows = [...created.body.matchAll(/recordId (rec_[0-9A-Z]+)/g)].map((m) => m[1]);
      assert.equal(rows[0], records.at(-1));

      const oneRecord = await browser.get(`${base}?id=${records[3]}`);
      assert.match(oneRecord.body, /Matching events <span class="count">\(2\)/);
      assert.match(oneRecord.body, /record\.created/);
      assert.match(oneRecord.body, /record\.assigned/);
      const both = await browser.get(`${base}?id=${records[3]}&type=record.assigned`);
      assert.match(both.body, /Matching events <span class="count">\(1\)/);
      const eventId = /<td><code>(evt_[0-9A-Z]+)<\/code>/.exec(both.body)![1]!;
      const byEventId = await browser.get(`${base}?id=${eventId}`);
      assert.match(byEventId.body, /Matching events <span class="count">\(1\)/);
      // An id that merely starts like another, or uses LIKE's wildcards, matches nothing.
      assert.match((await browser.get(`${base}?id=${records[3]!.slice(0, -1)}`)).body, /No events match these filters\./);
      assert.match((await browser.get(`${base}?id=${records[3]!.replace('rec_', 're__')}`)).body, /No events match these filters\./);

      const hourAgo = new Date(Date.now() - 3_600_000).toISOString().slice(0, 16);
      const inAnHour = new Date(Date.now() + 3_600_000).toISOString().slice(0, 16);
      const recent = await browser.get(`${base}?type=record.created&from=${hourAgo}&to=${inAnHour}`);
      assert.match(recent.body, /Matching events <span class="count">\(26\)/);
      const future = await browser.get(`${base}?from=${inAnHour}`);
      assert.match(future.body, /No events match these filters\./);

      const wrong = await browser.get(`${base}?from=2026-02-30T10:00&type=nope.event&id=${encodeURIComponent('"; drop')}`);
      assert.equal(wrong.statusCode, 400);
      assert.match(wrong.body, /Give a date and a time \(UTC\), or leave it empty\./);
      assert.match(wrong.body, /Choose one of the listed event types\./);
      assert.match(wrong.body, /An id has letters, digits/);
      assert.match(wrong.body, /aria-invalid="true"/);
      const backwards = await browser.get(`${base}?from=${inAnHour}&to=${hourAgo}`);
      assert.equal(backwards.statusCode, 400);
      assert.match(backwards.body, /Must be later than “From”\./);
    });

    it('keeps the new pages behind a session', async () => {
      const visitor = new AdminBrowser(t);
      for (const url of [`/admin/organizations/${ours.orgId}/webhooks`, `/admin/organizations/${ours.orgId}/webhooks/${ourHook}`, `/admin/organizations/${ours.orgId}/events`]) {
        const response = await visitor.get(url);
        assert.equal(response.statusCode, 303, url);
        assert.equal(response.headers.location, '/admin/login');
      }
      assert.equal((await browser.get('/admin/organizations/org_01JD3Q4W8Y6V3C0M2ZP4K7N9XA/webhooks')).statusCode, 404);
      assert.equal((await browser.get(`/admin/organizations/${ours.orgId}/webhooks/${'x'.repeat(80)}`)).statusCode, 404);
    });
  });
}
