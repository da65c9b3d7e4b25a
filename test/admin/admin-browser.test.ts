// Browser tests of the admin area: playwright-core drives Debian's chromium (/usr/bin/chromium,
// installed with apt-get; never a downloaded browser) against a real server on 127.0.0.1.
// One dialect is enough here: the HTTP suite covers the admin area on SQLite and PostgreSQL.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { axeViolations } from '../helpers/axe.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createAdmin } from './admin-client.js';

const CHROMIUM_ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
// The README's screenshot is refreshed only on request (UPDATE_SCREENSHOTS=1), so test runs leave the tree clean.
const SCREENSHOT = process.env.UPDATE_SCREENSHOTS
  ? path.resolve('docs/admin-keys.png')
  : path.join(mkdtempSync(path.join(tmpdir(), 'wo-shot-')), 'admin-keys.png');

describe('admin area in a browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const cspViolations: string[] = [];

  before(async () => {
    t = await startTestApp('sqlite');
    await createAdmin(t);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  });
  after(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await t.close();
  });

  async function newPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/.test(message.text())) cspViolations.push(message.text());
    });
    return page;
  }

  async function signIn(page: Page, email = ADMIN_EMAIL, password = ADMIN_PASSWORD): Promise<void> {
    await page.goto(`${base}/admin/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  const api = (key: string, pathname: string, init: RequestInit = {}) =>
    fetch(`${base}${pathname}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers } });

  it('an operator creates a key with two scopes, reads it once, the API honours its scopes, and revoking it makes the API answer 401', async () => {
    const page = await newPage();
    await page.goto(`${base}/admin/organizations`);
    assert.equal(new URL(page.url()).pathname, '/admin/login', 'no session: sent to sign in');
    await signIn(page);
    assert.equal(new URL(page.url()).pathname, '/admin/organizations');

    await page.getByLabel('Name').fill('Harbour Properties');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('link', { name: 'Create its first API key' }).click();
    await page.getByRole('heading', { name: /API keys/ }).waitFor();
    const keysUrl = page.url();

    await page.getByLabel('Name').fill('ERP production');
    await page.getByLabel('records:read', { exact: true }).check();
    await page.getByLabel('categories:write', { exact: true }).check();
    await page.getByLabel('In 90 days').check();
    await page.getByRole('button', { name: 'Create API key' }).click();

    const keyField = page.getByLabel('API key', { exact: true });
    const key = await keyField.inputValue();
    assert.match(key, /^wo_[0-9A-Za-z]{44}$/);
    assert.match(await page.locator('.one-time-key').innerText(), /shown only this once/);
    assert.equal(new URL(page.url()).search, '', 'the key never travels in a URL');

    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);

    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // The key works for what it was granted, and only that.
    assert.equal((await api(key, '/api/v1/records')).status, 200);
    const created = await api(key, '/api/v1/categories', { method: 'POST', body: JSON.stringify({ name: 'Plumbing' }) });
    assert.equal(created.status, 201);
    const forbidden = await api(key, '/api/v1/categories');
    assert.equal(forbidden.status, 403);
    assert.equal(((await forbidden.json()) as { code: string }).code, 'insufficient_scope');

    // Back on the list, the value is gone for good: only the prefix remains.
    await page.goto(keysUrl);
    await page.reload();
    assert.equal((await page.content()).includes(key), false);
    assert.equal(await page.getByLabel('API key', { exact: true }).count(), 0);
    const row = page.locator('table.keys').getByRole('row', { name: /ERP production/ });
    assert.match(await row.innerText(), new RegExp(`${key.slice(0, 11)}…`));
    assert.match(await row.innerText(), /Active/);

    await row.getByRole('link', { name: 'Revoke ERP production' }).click();
    await page.getByRole('heading', { name: 'Revoke API key “ERP production”?' }).waitFor();
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText(/is revoked; requests with it now get 401/).waitFor();
    assert.match(await page.locator('table.keys').getByRole('row', { name: /ERP production/ }).innerText(), /Revoked/);

    const refused = await api(key, '/api/v1/records');
    assert.equal(refused.status, 401);

    const activity = await page.locator('section', { has: page.getByRole('heading', { name: 'Activity' }) }).innerText();
    assert.match(activity, /api_key\.revoked/);
    assert.match(activity, /api_key\.created/);
    assert.match(activity, new RegExp(ADMIN_EMAIL.replace('.', '\\.')));
  });

  it('refuses a form posted without its CSRF token', async () => {
    const page = await newPage();
    await signIn(page);
    await page.getByLabel('Name').fill('Forged Ltd');
    await page.evaluate(() => document.querySelectorAll('input[name="_csrf"]').forEach((input) => input.remove()));
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Create organization' }).click(),
    ]);
    assert.equal(response.status(), 403);
    await page.getByRole('heading', { name: 'Request refused' }).waitFor();
    assert.equal((await t.context.organizations.list()).some((o) => o.name === 'Forged Ltd'), false);
  });

  it('throttles wrong passwords: after five failures even the right one is refused for a while', async () => {
    await createAdmin(t, 'target@example.com');
    const page = await newPage();
    for (let i = 0; i < 5; i++) {
      await signIn(page, 'target@example.com', `wrong guess number ${i}`);
      await page.getByText('The email or password is not correct.').waitFor();
    }
    await signIn(page, 'target@example.com', ADMIN_PASSWORD);
    await page.getByText(/Too many failed sign-in attempts/).waitFor();
    assert.equal(new URL(page.url()).pathname, '/admin/login');
  });

  it('keeps every page behind a session and sends the security headers', async () => {
    const page = await newPage();
    const org = (await t.context.organizations.list())[0]!;
    for (const pathname of ['/admin', '/admin/audit', `/admin/organizations/${org.id}/keys`]) {
      await page.goto(`${base}${pathname}`);
      assert.equal(new URL(page.url()).pathname, '/admin/login', pathname);
    }
    const post = await fetch(`${base}/admin/organizations`, { method: 'POST', body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' });
    assert.equal(post.status, 401);

    const response = await page.goto(`${base}/admin/login`);
    const headers = response!.headers();
    assert.match(headers['content-security-policy']!, /frame-ancestors 'none'/);
    // It would send the page's own assets to https on any host but loopback, where they do not exist.
    assert.doesNotMatch(headers['content-security-policy']!, /upgrade-insecure-requests/);
    assert.equal(headers['x-content-type-options'], 'nosniff');
    assert.equal(headers['x-frame-options'], 'DENY');
    assert.deepEqual(cspViolations, [], 'no page tripped its own Content-Security-Policy');
  });

  it('is usable from the keyboard and on a narrow screen', async () => {
    const page = await newPage({ width: 360, height: 740 });
    await signIn(page);
    // The first Tab of a freshly loaded page: make sure the page is loaded and has the focus first.
    await page.waitForLoadState('load');
    await page.bringToFront();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
    const org = (await t.context.organizations.list())[0]!;
    await page.goto(`${base}/admin/organizations/${org.id}/keys`);
    // Wide tables scroll inside their own region; the page itself never scrolls sideways.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    // Every form control has a label.
    const unlabelled = await page.evaluate(() =>
      Array.from(document.querySelectorAll('input:not([type="hidden"]), select, textarea'))
        .filter((el) => !(el as HTMLInputElement).labels?.length && !el.getAttribute('aria-label'))
        .map((el) => el.outerHTML),
    );
    assert.deepEqual(unlabelled, []);
    // A checkbox toggles with the space bar.
    const box = page.getByLabel('proofs:read', { exact: true });
    await box.focus();
    await page.keyboard.press('Space');
    assert.equal(await box.isChecked(), true);
  });

  it('passes axe-core on every admin page: sign-in, organizations, keys with each state and the one-time key, revocation, audit log, errors', async () => {
    const org = await t.context.organizations.create('Axe Checked Properties');
    const revoked = await t.context.apiKeys.create({ orgId: org.id, name: 'Retired feed', scopes: ['records:read'], createdBy: 'test' });
    await t.context.apiKeys.revoke(revoked.apiKey.id);
    const expired = await t.context.apiKeys.create({ orgId: org.id, name: 'Trial', scopes: ['records:read'], createdBy: 'test' });
    await t.context.database.db.updateTable('api_keys').set({ expires_at: '2020-01-01T00:00:00.000Z' }).where('id', '=', expired.apiKey.id).execute();

    const page = await newPage();
    const findings: string[] = [];
    const check = async (what: string) => findings.push(...(await axeViolations(page)).map((line) => `${what}: ${line}`));
    await page.goto(`${base}/admin/login`);
    await check('sign-in');
    await signIn(page);
    await page.getByRole('heading', { name: 'Organizations', exact: true }).waitFor();
    await check('organizations');
    await page.goto(`${base}/admin/organizations/${org.id}/keys`);
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.getByText('Choose at least one scope.').waitFor();
    await check('keys with form errors');
    await page.getByLabel('Name').fill('Axe checked');
    await page.getByLabel('records:read', { exact: true }).check();
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.locator('.one-time-key').waitFor();
    await check('keys with the one-time key, active, expired and revoked keys');
    await page.locator('table.keys').getByRole('row', { name: /Axe checked/ }).getByRole('link', { name: /Revoke/ }).click();
    await page.getByRole('button', { name: 'Revoke key' }).waitFor();
    await check('revocation');
    await page.goto(`${base}/admin/audit`);
    await check('audit log');
    await page.goto(`${base}/admin/organizations/org_01JD3Q4W8Y6V3C0M2ZP4K7N9XA/keys`);
    await check('not found');
    assert.deepEqual(findings, []);
  });

  it('shows every key’s Revoke button without scrolling sideways at 1280 px, with every column filled', async () => {
    const org = await t.context.organizations.create('Wide Table Property Management Group');
    for (const name of ['Property management nightly synchronisation', 'ERP production integration', 'Retired warehouse feed']) {
      const created = await t.context.apiKeys.create({
        orgId: org.id,
        name,
        scopes: ['records:read', 'records:write', 'categories:write', 'locations:write', 'webhooks:manage'],
        createdBy: 'test',
        expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      });
      await t.context.apiKeys.authenticate(created.key); // a "last used" time too
      if (name.startsWith('Retired')) await t.context.apiKeys.revoke(created.apiKey.id);
    }
    const page = await newPage({ width: 1280, height: 900 });
    await signIn(page);
    await page.goto(`${base}/admin/organizations/${org.id}/keys`);
    const wrap = page.locator('.table-wrap', { has: page.locator('table.keys') });
    const [scrollWidth, clientWidth] = await wrap.evaluate((element) => [element.scrollWidth, element.clientWidth]);
    assert.ok(scrollWidth <= clientWidth, `the keys table scrolls sideways by ${scrollWidth - clientWidth}px`);
    const box = (await wrap.boundingBox())!;
    const buttons = page.locator('table.keys').getByRole('link', { name: /^Revoke/ });
    assert.equal(await buttons.count(), 2);
    for (const button of await buttons.all()) {
      const at = (await button.boundingBox())!;
      assert.ok(at.x >= box.x && at.x + at.width <= box.x + box.width && at.x + at.width <= 1280, `Revoke at ${at.x}+${at.width}, table ${box.x}+${box.width}`);
    }
  });
});
