// The intake form and the status page in a real browser (playwright-core drives Debian's chromium): a
// tenant on a phone fills the form, attaches a photo, lets the page solve the proof-of-work, sends it,
// lands on their status page and watches it move as the work order does, to the sealed proof. axe-core
// checks each state. Without JavaScript the form still renders and says what it needs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { axeViolations } from '../helpers/axe.js';
import { pngImage } from '../helpers/png.js';
import { startTestApp, waitFor, type TestApp } from '../helpers/test-app.js';

const CHROMIUM_ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
// docs/requests.md's screenshots are refreshed only on request (UPDATE_SCREENSHOTS=1), so test runs leave the tree clean.
const SHOTS = process.env.UPDATE_SCREENSHOTS ? path.resolve('docs/images') : mkdtempSync(path.join(tmpdir(), 'wo-shot-'));

describe('the intake pages in a browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;

  before(async () => {
    t = await startTestApp('sqlite', { env: { WO_PROOF_BATCH_INTERVAL_MS: '50' } });
    for (const job of t.context.backgroundJobs) job.start();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  async function setUp() {
    const tenant = await t.newTenant();
    const api = async (method: string, url: string, payload?: unknown) => {
      const response = await tenant.request({ method: method as 'GET', url, ...(payload === undefined ? {} : { payload: payload as never }) });
      assert.ok(response.statusCode < 300, `${method} ${url}: ${response.statusCode} ${response.body}`);
      return response.json();
    };
    const category = await api('POST', '/api/v1/categories', { name: 'Plumbing' });
    const site = await api('POST', '/api/v1/locations', { name: 'Harbour House' });
    const link = await api('POST', '/api/v1/intake-links', { name: 'Harbour House, entrance hall', locationId: site.id, categoryId: category.id });
    return { tenant, api, formUrl: `${base}${new URL(link.url).pathname}` };
  }

  it('takes a tenant on a phone from the form to the status page, and the page follows the work order to its sealed proof', async () => {
    const { api, formUrl } = await setUp();
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/.test(message.text())) refused.push(message.text());
    });
    const findings: string[] = [];
    const check = async (what: string) => findings.push(...(await axeViolations(page)).map((line) => `${what}: ${line}`));

    await page.goto(formUrl);
    await page.getByRole('heading', { name: 'Report a problem' }).waitFor();
    await page.getByText('Harbour House, entrance hall · Harbour House').waitFor();
    await check('form');
    await page.getByLabel('Describe the problem').fill('Water drips from the ceiling of the bathroom.');
    await page.getByLabel('Your name').fill('Ann Tenant');
    await page.getByLabel('Email').fill('ann@example.com');
    await page.getByLabel('Unit or room').fill('Flat 4');
    const photo = pngImage(480, 360, (x, y) => [60 + ((x * 150) / 480) | 0, 120 + ((y * 100) / 360) | 0, 200]);
    const photoPath = path.join(mkdtempSync(path.join(tmpdir(), 'wo-photo-')), 'ceiling.png');
    writeFileSync(photoPath, photo);
    await page.getByLabel(/^Photos/).setInputFiles(photoPath);
    // The page's script solves the proof-of-work, then lets the form be sent.
    await page.getByText('Ready to send.').waitFor({ timeout: 30_000 });
    assert.equal(await page.getByRole('button', { name: 'Send report' }).isEnabled(), true);
    await check('form filled');
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, 'intake-form.png'), fullPage: true });
    await page.getByRole('button', { name: 'Send report' }).click();

    await page.waitForURL(/\/intake\/status\/wrs_/);
    const statusUrl = page.url();
    await page.getByRole('heading', { name: 'Your report' }).waitFor();
    assert.equal(await currentStep(page), 'Received');
    await page.getByText('Water drips from the ceiling of the bathroom.').waitFor();
    await check('received');

    const [request] = (await api('GET', '/api/v1/requests?channel=intake')).requests;
    const files = await api('GET', `/api/v1/requests/${request.id}/attachments`);
    assert.equal(files.attachments[0].sha256, createHash('sha256').update(photo).digest('hex'), 'the photo’s bytes, as sent');

    // The manager approves it with one call; the tenant's page follows the work order.
    const approved = await api('POST', `/api/v1/requests/${request.id}/approve`, { assignee: 'Technician Tom Staffname' });
    await page.reload();
    assert.equal(await currentStep(page), 'Approved');
    assert.equal(await page.getByRole('button', { name: 'Cancel my report' }).count(), 0, 'no cancel once decided');
    await api('POST', `/api/v1/records/${approved.recordId}/start`);
    await page.reload();
    assert.equal(await currentStep(page), 'In progress');
    const onRecord = await api('GET', `/api/v1/records/${approved.recordId}/attachments`);
    await api('POST', `/api/v1/records/${approved.recordId}/complete`, { resolutionNotes: 'Resealed the bath; ceiling dried.', evidence: [{ attachmentId: onRecord.attachments[0].id }] });
    await waitFor(async () => {
      await page.reload();
      return (await page.getByRole('heading', { name: 'Proof of the work' }).count()) > 0;
    }, 20_000, 'the status page showing the sealed proof');
    assert.equal(await currentStep(page), 'Done');
    assert.equal(await page.getByRole('link', { name: 'Check a proof yourself' }).getAttribute('href'), '/verify');
    const body = await page.locator('body').innerText();
    assert.doesNotMatch(body, /Tom|Staffname|Technician/, 'no staff names');
    await check('done');
    await page.screenshot({ path: path.join(SHOTS, 'intake-status.png'), fullPage: true });
    assert.ok(statusUrl.startsWith(base));
    assert.deepEqual(refused, []);
    assert.deepEqual(findings.filter((line) => /^(serious|critical) /.test(line)), [], 'no serious or critical finding');
    assert.deepEqual(findings, [], 'no axe finding at all');
    await context.close();
  });

  it('renders without JavaScript and says what it needs; a rejected or cancelled report says so', async () => {
    const { api, formUrl } = await setUp();
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(formUrl);
    await page.getByText('This form needs JavaScript for one step').waitFor();
    await page.getByLabel('Describe the problem').fill('The entrance door does not lock.');
    await page.getByLabel('Your name').fill('Bo');
    await page.getByRole('button', { name: 'Send report' }).click();
    await page.getByText(/proof-of-work is missing/).waitFor();
    assert.equal(await page.getByLabel('Describe the problem').inputValue(), 'The entrance door does not lock.', 'what was typed is kept');
    assert.equal((await api('GET', '/api/v1/requests')).total, 0);
    await context.close();

    // Two requests sent with a solved form (as the browser would), then followed without JavaScript.
    const withScript = await browser.newContext();
    const send = async (description: string) => {
      const form = await withScript.newPage();
      await form.goto(formUrl);
      await form.getByLabel('Describe the problem').fill(description);
      await form.getByLabel('Your name').fill('Cy');
      await form.getByText('Ready to send.').waitFor({ timeout: 30_000 });
      await form.getByRole('button', { name: 'Send report' }).click();
      await form.waitForURL(/\/intake\/status\//);
      return form.url();
    };
    const [rejectedUrl, cancelledUrl] = [await send('Paint the hallway blue'), await send('The light is out')];
    await withScript.close();
    const noScript = await browser.newContext({ javaScriptEnabled: false });
    const page2 = await noScript.newPage();
    const requests = (await api('GET', '/api/v1/requests')).requests as { id: string; description: string }[];
    await api('POST', `/api/v1/requests/${requests.find((r) => r.description.startsWith('Paint'))!.id}/reject`, { reason: 'Decoration is the tenant’s to arrange.' });
    await page2.goto(rejectedUrl);
    await page2.getByRole('heading', { name: 'Not taken on' }).waitFor();
    await page2.getByText('Decoration is the tenant’s to arrange.').waitFor();
    await page2.goto(cancelledUrl);
    await page2.getByRole('button', { name: 'Cancel my report' }).click();
    await page2.getByRole('heading', { name: 'Cancelled' }).waitFor();
    assert.equal((await api('GET', `/api/v1/requests/${requests.find((r) => r.description.startsWith('The light'))!.id}`)).status, 'CANCELLED');
    await noScript.close();
  });
});

async function currentStep(page: Page): Promise<string> {
  return (await page.locator('[aria-current="step"]').innerText()).trim();
}
