// The admin area's webhook and event pages in a real browser: playwright-core drives Debian's
// chromium against a real server on 127.0.0.1, whose deliveries go to a real loopback receiver.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { axeViolations } from '../helpers/axe.js';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { createWorkOrder, startTestApp, waitFor, type TestApp, type Tenant } from '../helpers/test-app.js';
import { receiverPool, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createAdmin } from './admin-client.js';

const CHROMIUM_ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** Every axe finding, whatever its impact (the brief asks for no serious or critical one; the admin area has none at all). */
async function axeFindings(page: Page, what: string): Promise<string[]> {
  return (await axeViolations(page)).map((line) => `${what}: ${line}`);
}

for (const dialect of TEST_DIALECTS) {
  describe(`admin webhook deliveries and event log in a browser (${dialect})`, () => {
    let t: TestApp;
    let base: string;
    let browser: Browser;
    const receivers = receiverPool();
    let receiver: WebhookReceiver;
    let tenant: Tenant;
    let orgName: string;
    let recordId: string;
    let otherRecordId: string;
    const cspViolations: string[] = [];

    before(async () => {
      t = await startTestApp(dialect, { env: { WO_WEBHOOK_RETRY_BASE_MS: '50', WO_WEBHOOK_IDLE_POLL_MS: '10' } });
      for (const job of t.context.backgroundJobs) job.start();
      await createAdmin(t);
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      receiver = await receivers.start(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true,"note":"thanks from the receiver"}' }));
      tenant = await t.newTenant();
      orgName = (await t.context.organizations.find(tenant.orgId)).name;
      const created = await tenant.request({ method: 'POST', url: '/api/v1/webhooks', payload: { name: 'Facilities ERP', url: receiver.url, events: ['record.created'] } });
      assert.equal(created.statusCode, 201, created.body);
      recordId = await createWorkOrder(tenant);
      otherRecordId = await createWorkOrder(tenant);
      await waitFor(() => receiver.received.length >= 2 || undefined, 15_000, 'two deliveries received');
      browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    });
    after(async () => {
      await browser?.close();
      await t.close();
      await receivers.closeAll();
    });

    async function newPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      page.on('console', (message) => {
        if (/Content Security Policy|Refused to/.test(message.text())) cspViolations.push(message.text());
      });
      return page;
    }

    async function signIn(page: Page): Promise<void> {
      await page.goto(`${base}/admin/login`);
      await page.getByLabel('Email').fill(ADMIN_EMAIL);
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Organizations', exact: true }).waitFor();
    }

    it('an operator sees a subscription, its delivery with attempts, redelivers it and sees the new attempt, then filters the event log; axe finds nothing on any page', async () => {
      const page = await newPage();
      const findings: string[] = [];
      await signIn(page);

      await page.getByRole('link', { name: `Webhooks of ${orgName}` }).click();
      await page.getByRole('heading', { name: /^Webhooks/, level: 1 }).waitFor();
      const chart = page.getByRole('img', { name: /Deliveries of “Facilities ERP” in the last 24 hours/ });
      assert.equal(await chart.count(), 1);
      assert.match((await page.locator('figcaption').first().innerText()), /Last 24 hours: 2 attempts, 2 answered 2xx \(100 %\)/);
      await page.locator('summary', { hasText: 'Hour by hour' }).first().click();
      await page.getByRole('table', { name: /Attempts by hour/ }).waitFor();
      findings.push(...(await axeFindings(page, 'webhooks')));

      await page.getByRole('link', { name: 'Facilities ERP' }).click();
      await page.getByRole('heading', { name: /Webhook “Facilities ERP”/ }).waitFor();
      const rows = page.locator('table.deliveries tbody tr');
      assert.equal(await rows.count(), 2);
      assert.match(await rows.first().innerText(), /record\.created[\s\S]*Succeeded[\s\S]*#1 HTTP 200, \d+ ms,[\s\S]*thanks from the receiver/);
      findings.push(...(await axeFindings(page, 'subscription')));

      // The older delivery: the first work order's.
      await rows.last().getByRole('link', { name: /record\.created/ }).click();
      await page.getByRole('heading', { name: /Delivery of record\.created/ }).waitFor();
      const eventId = (await page.locator('dt:has-text("Event id") + dd code').first().innerText()).trim();
      const firstAttempt = page.locator('table.attempts tbody tr');
      assert.equal(await firstAttempt.count(), 1);
      assert.match(await firstAttempt.innerText(), /#1[\s\S]*HTTP 200[\s\S]*\d+ ms[\s\S]*\{"ok":true,"note":"thanks from the receiver"\}/);
      findings.push(...(await axeFindings(page, 'delivery')));

      const receivedBefore = receiver.received.length;
      await page.getByRole('button', { name: 'Redeliver' }).click();
      await page.getByText(/Redelivery queued/).waitFor();
      // The worker sends it: reload until the new delivery shows its attempt.
      await waitFor(
        async () => {
          await page.reload();
          return (await page.locator('table.attempts tbody tr').count()) === 1 || undefined;
        },
        15_000,
        'the redelivery’s attempt on its page',
      );
      assert.match(await page.locator('table.attempts tbody tr').innerText(), /#1[\s\S]*HTTP 200/);
      assert.equal(receiver.received.length, receivedBefore + 1);
      assert.equal(receiver.received.at(-1)!.headers['x-webhook-id'], eventId, 'the same X-Webhook-Id');
      findings.push(...(await axeFindings(page, 'redelivery')));

      await page.getByRole('navigation', { name: 'Organization' }).getByRole('link', { name: 'Events' }).click();
      await page.getByRole('heading', { name: /^Events/, level: 1 }).waitFor();
      findings.push(...(await axeFindings(page, 'events')));
      await page.getByLabel('Type').selectOption('record.created');
      await page.getByLabel('Record, resource or event id').fill(recordId);
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByRole('heading', { name: /Matching events \(1\)/ }).waitFor();
      const eventRows = page.locator('table.events tbody tr');
      assert.equal(await eventRows.count(), 1);
      assert.match(await eventRows.innerText(), new RegExp(`record\\.created[\\s\\S]*recordId ${recordId}`));
      assert.doesNotMatch(await page.locator('table.events').innerText(), new RegExp(otherRecordId));
      await eventRows.getByText('Payload').click();
      assert.match(await eventRows.locator('pre').innerText(), new RegExp(`"recordId": "${recordId}"`));
      findings.push(...(await axeFindings(page, 'filtered events')));

      await page.getByLabel('From (UTC)').fill(new Date(Date.now() + 3_600_000).toISOString().slice(0, 16));
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('No events match these filters.').waitFor();
      assert.deepEqual(findings, []);
      assert.deepEqual(cspViolations, [], 'no page tripped its own Content-Security-Policy');
    });

    it('fits the subscription page on a 360 px screen without scrolling sideways', async () => {
      const page = await newPage({ width: 360, height: 740 });
      await signIn(page);
      const hook = (await tenant.request({ method: 'GET', url: '/api/v1/webhooks' })).json().webhooks[0].id as string;
      for (const pathname of [`/admin/organizations/${tenant.orgId}/webhooks/${hook}`, `/admin/organizations/${tenant.orgId}/events`]) {
        await page.goto(`${base}${pathname}`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        const wide = await page.evaluate(() =>
          Array.from(document.querySelectorAll('main *'))
            .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth)
            .map((el) => `${el.tagName}.${el.className} ${Math.round(el.getBoundingClientRect().right)}`)
            .slice(0, 5),
        );
        assert.ok(overflow <= 0, `${pathname} scrolls sideways by ${overflow}px: ${wide.join(', ')}`);
      }
    });
  });
}
