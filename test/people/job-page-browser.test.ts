// The job page in a real browser (playwright-core drives Debian's chromium, /usr/bin/chromium): a
// contractor on a phone-sized screen starts the job, writes a note, uploads a photo and completes
// with it as evidence; the sealed proof then verifies and names the vendor. axe-core checks each state.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { axeViolations } from '../helpers/axe.js';
import { pngImage } from '../helpers/png.js';
import { startTestApp, waitFor, type TestApp } from '../helpers/test-app.js';
import { describeCompletion, verifyBundle, type Jwks, type ProofBundle } from '../../src/proofs/verify.js';
import type { CompletionStatement } from '../../src/proofs/statement.js';

const CHROMIUM_ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
// docs/people.md's screenshot is refreshed only on request (UPDATE_SCREENSHOTS=1), so test runs leave the tree clean.
const SCREENSHOT = process.env.UPDATE_SCREENSHOTS ? path.resolve('docs/images/job-page.png') : path.join(mkdtempSync(path.join(tmpdir(), 'wo-shot-')), 'job-page.png');

describe('the job page in a browser', () => {
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

  it('takes a contractor on a phone from start to a sealed proof that names the vendor, with no serious or critical axe finding', async () => {
    const tenant = await t.newTenant();
    const api = async (method: string, url: string, payload?: unknown) => {
      const response = await tenant.request({ method: method as 'GET', url, ...(payload === undefined ? {} : { payload: payload as never }) });
      assert.ok(response.statusCode < 300, `${method} ${url}: ${response.statusCode} ${response.body}`);
      return response.json();
    };
    const category = await api('POST', '/api/v1/categories', { name: 'Plumbing' });
    const site = await api('POST', '/api/v1/locations', { name: 'Harbour House' });
    const acme = await api('POST', '/api/v1/vendors', { name: 'Acme Plumbing', phone: '+44 20 7946 0000', trades: ['Plumbing'] });
    const checklist = await api('POST', '/api/v1/checklists', {
      name: 'Leak repair',
      items: [
        { key: 'dry', label: 'Cabinet dry after 10 minutes', type: 'pass_fail', required: true },
        { key: 'repaired', label: 'Photo of the repair', type: 'photo', required: true },
      ],
    });
    const leak = await api('POST', '/api/v1/records', {
      categoryId: category.id,
      locationId: site.id,
      address: '12 Harbour Road, Flat 4',
      requesterName: 'Ann Tenant',
      description: 'Leak under the kitchen sink',
      priority: 'HIGH',
      dueAt: '2030-05-04T14:00:00.000Z',
      assignees: [{ type: 'vendor', id: acme.id }],
      checklistIds: [checklist.id],
    });
    const link = await api('POST', `/api/v1/records/${leak.id}/access-links`, { vendorId: acme.id, expiresIn: 'P7D' });
    const jobUrl = `${base}${new URL(link.url).pathname}`;

    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/.test(message.text())) refused.push(message.text());
    });
    const findings: string[] = [];
    const check = async (what: string) => findings.push(...(await axeViolations(page)).map((line) => `${what}: ${line}`));

    await page.goto(jobUrl);
    await page.getByRole('heading', { name: 'Leak under the kitchen sink' }).waitFor();
    await page.getByText('Job for Acme Plumbing').waitFor();
    await check('assigned');
    await page.getByRole('button', { name: 'Start job' }).click();
    await page.getByText('In progress', { exact: true }).waitFor();
    await check('in progress');

    await page.getByLabel('Note for the office').fill('Trap was cracked; replaced it and the valve.');
    await page.getByRole('button', { name: 'Add note' }).click();
    await page.getByText('Trap was cracked; replaced it and the valve.').waitFor();

    const photo = pngImage(480, 360, (x, y) => [40 + ((x * 180) / 480) | 0, 90 + ((y * 120) / 360) | 0, 160]);
    const photoDir = mkdtempSync(path.join(tmpdir(), 'wo-photo-'));
    const photoPath = path.join(photoDir, 'new-trap.png');
    writeFileSync(photoPath, photo);
    await page.getByLabel('Add photos').setInputFiles(photoPath);
    await page.getByRole('button', { name: 'Upload photos' }).click();
    await page.getByRole('img', { name: 'Photo new-trap.png' }).waitFor();
    const completion = page.locator('form[action$="/complete"]');
    await completion.getByLabel('new-trap.png').waitFor();
    await check('with a photo');

    // The checklist, answered with the page's plain forms; completion waits for it.
    const item = (label: string) => page.getByRole('listitem').filter({ hasText: label });
    await item('Cabinet dry after 10 minutes').getByLabel('Pass').check();
    await item('Cabinet dry after 10 minutes').getByRole('button', { name: 'Save answer' }).click();
    await item('Cabinet dry after 10 minutes').getByText('Answered: Pass').waitFor();
    await item('Photo of the repair').getByLabel('new-trap.png').check();
    await item('Photo of the repair').getByRole('button', { name: 'Save answer' }).click();
    await page.getByText('Every required item is answered.').waitFor();
    await check('checklist answered');
    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    await page.getByLabel('What was done').fill('Replaced the cracked trap and the isolation valve; no more leak.');
    assert.equal(await completion.getByLabel('new-trap.png').isChecked(), true);
    await page.getByRole('button', { name: 'Complete job' }).click();
    await page.getByText('Nothing more can be done through this link.').waitFor();
    await check('completed');
    assert.equal(await page.locator('form').count(), 0, 'read-only once completed');
    assert.deepEqual(refused, []);
    assert.deepEqual(findings.filter((line) => /^(serious|critical) /.test(line)), [], 'no serious or critical finding');
    assert.deepEqual(findings, [], 'no axe finding at all');
    await context.close();

    // The sealed proof verifies offline, and names the vendor as assignee and the link it worked through.
    const bundle = await waitFor(async () => {
      const answer = await tenant.request({ method: 'GET', url: `/api/v1/records/${leak.id}/proof` });
      return answer.statusCode === 200 ? (answer.json() as ProofBundle) : undefined;
    }, 15_000, 'the sealed proof');
    const jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as Jwks;
    const result = await verifyBundle(bundle, jwks);
    assert.equal(result.valid, true, JSON.stringify(result));
    const statement = (result as { statement: CompletionStatement }).statement;
    assert.deepEqual(statement.assignees, [{ type: 'vendor', id: acme.id, name: 'Acme Plumbing' }]);
    const byLink = statement.history.filter((entry) => entry.actor === `link:${link.id}`);
    assert.deepEqual(byLink.map((entry) => [entry.action, entry.actorName]), [['start', 'Acme Plumbing'], ['commented', 'Acme Plumbing'], ['attachment_added', 'Acme Plumbing'], ['complete', 'Acme Plumbing']]);
    assert.deepEqual(
      statement.checklists?.[0]?.answers.map((answer) => [answer.key, answer.value]),
      [['dry', 'pass'], ['repaired', { attachmentIds: [statement.evidence[0]!.attachmentId] }]],
    );
    assert.deepEqual(statement.checklists?.[0]?.answers.map((answer) => answer.answeredBy), [`link:${link.id}`, `link:${link.id}`]);
    assert.equal(statement.evidence[0]!.name, 'new-trap.png');
    assert.equal(statement.evidence[0]!.size, photo.length);
    assert.match(describeCompletion(statement), new RegExp(`by link:${link.id} for "Acme Plumbing" .* named "Acme Plumbing" \\(vendor ${acme.id}\\) as assignee\\.`));
  });
  it('uploads photos with JavaScript switched off, through the form the browser sends itself', async () => {
    const tenant = await t.newTenant();
    const api = async (method: string, url: string, payload?: unknown) => {
      const response = await tenant.request({ method: method as 'GET', url, ...(payload === undefined ? {} : { payload: payload as never }) });
      assert.ok(response.statusCode < 300, `${method} ${url}: ${response.statusCode} ${response.body}`);
      return response.json();
    };
    const category = await api('POST', '/api/v1/categories', { name: 'Electrical' });
    const sparks = await api('POST', '/api/v1/vendors', { name: 'Sparks Ltd' });
    const job = await api('POST', '/api/v1/records', { categoryId: category.id, address: '3 Mill Lane', requesterName: 'Bo', description: 'Flickering lights on the landing', assignees: [{ type: 'vendor', id: sparks.id }] });
    const link = await api('POST', `/api/v1/records/${job.id}/access-links`, { vendorId: sparks.id, expiresIn: 'P1D' });
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-photo-'));
    const files = ['before.png', 'after.png'].map((name, n) => {
      const file = path.join(dir, name);
      writeFileSync(file, pngImage(64, 48, (x, y) => [x * 4, y * 5, n * 200]));
      return file;
    });

    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(`${base}${new URL(link.url).pathname}`);
    await page.getByLabel('Add photos').setInputFiles(files);
    await page.getByRole('button', { name: 'Upload photos' }).click();
    await page.getByRole('img', { name: 'Photo before.png' }).waitFor();
    await page.getByRole('img', { name: 'Photo after.png' }).waitFor();
    assert.equal(new URL(page.url()).pathname, new URL(link.url).pathname, 'back on the job page after the upload');
    await context.close();
    const attached = await api('GET', `/api/v1/records/${job.id}/attachments`);
    assert.deepEqual(attached.attachments.map((file: { filename: string; mediaType: string }) => [file.filename, file.mediaType]).sort(), [['after.png', 'image/png'], ['before.png', 'image/png']]);
  });
});
