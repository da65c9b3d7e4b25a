import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { freePort } from '../helpers/free-port.js';

const CHROMIUM = '/usr/bin/chromium';
// Swagger UI renders the whole document (about 170 operations) before a deep link opens: 7–14 s on this
// 2-core machine under a test run's load, and more under heavier load; these are deadlines, not waits.
const DEADLINE_MS = 40_000;

// A host name that is not loopback, resolved to the test server: browsers treat plain http there as
// insecure (unlike 127.0.0.1), which is how a new user on a LAN or a staging host opens /docs.
const LAN_HOST = 'work-orders.example.test';

describe('the /docs API reference in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let port: number;

  before(async () => {
    // The document's server is WO_PUBLIC_URL, where "Try it out" sends: this very server.
    port = await freePort();
    t = await startTestApp('sqlite', { env: { WO_PUBLIC_URL: `http://127.0.0.1:${port}` } });
    await t.app.listen({ host: '127.0.0.1', port });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', `--host-resolver-rules=MAP ${LAN_HOST} 127.0.0.1`],
    });
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  for (const host of ['127.0.0.1', LAN_HOST]) {
    it(`renders every operation of the OpenAPI document over plain http at ${host}, with nothing refused by its security policy`, async () => {
      const openapi = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
      const operations = Object.values(openapi.paths).reduce((sum, item) => sum + Object.keys(item).length, 0);
      const page = await browser.newPage();
      const violations: string[] = [];
      const failed: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      page.on('response', (response) => {
        if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
      });
      page.on('requestfailed', (request) => failed.push(`${request.failure()?.errorText} ${request.url()}`));
      const response = await page.goto(`http://${host}:${port}/docs/`);
      assert.equal(response?.status(), 200);
      assert.doesNotMatch(response!.headers()['content-security-policy']!, /upgrade-insecure-requests/);
      await page.waitForFunction((count) => document.querySelectorAll('.opblock').length >= count, operations, { timeout: DEADLINE_MS }).catch(async (error: unknown) => {
        throw new Error(`${String(error)}; rendered ${await page.evaluate(() => document.querySelectorAll('.opblock').length)} of ${operations}; failed: ${failed.join(', ')}`);
      });
      assert.deepEqual(violations, []);
      assert.deepEqual(failed, []);
      // The explore field names the document clients fetch, and the top bar shows no framework logo.
      assert.equal(await page.inputValue('.topbar .download-url-input'), '/api/v1/openapi.json');
      const logos = await page.evaluate(() =>
        Array.from(document.querySelectorAll('.topbar .link svg, .topbar .link img')).filter((logo) => logo.getBoundingClientRect().width > 0).map((logo) => logo.getAttribute('src') ?? logo.tagName),
      );
      assert.equal(logos.length, 1, logos.join(', '));
      assert.match(Buffer.from(/^data:image\/svg\+xml;base64,(.+)$/.exec(logos[0]!)?.[1] ?? '', 'base64').toString(), />WO</, 'the service’s own mark');
      await page.close();
    });
  }

  it('opens a deprecated operation’s entry, marked deprecated, at the link its answers give', async () => {
    const tenant = await t.newTenant(['records:read']);
    const answer = await tenant.request({ method: 'GET', url: '/api/v1/records/rec_00000000000000000000000000/events' });
    const target = /<([^>]*)>; rel="deprecation"/.exec(String(answer.headers.link))?.[1];
    assert.ok(target, String(answer.headers.link));
    const page = await browser.newPage();
    await page.goto(new URL(target, `http://127.0.0.1:${port}/api/v1/records/x/events`).href);
    // Swagger UI's deep link (on by default) opens the operation; a deprecated one is styled apart (no `is-open`, its path struck through).
    const opened = page.locator('.opblock.opblock-deprecated', { has: page.locator('.opblock-summary-control[aria-expanded="true"]') });
    await opened.locator('.opblock-body').waitFor({ timeout: DEADLINE_MS });
    assert.match(await opened.locator('.opblock-summary-path__deprecated').innerText(), /\/api\/v1\/records\/\{id\}\/events/);
    await page.close();
  });

  it('creates a category with the example the reference offers, as a newcomer would: Authorize, Try it out, Execute', async () => {
    const tenant = await t.newTenant(['categories:read', 'categories:write']);
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/docs/#/Categories/createCategory`);
    await page.click('.auth-wrapper .authorize');
    await page.fill('.modal-ux input', tenant.key);
    await page.click('.modal-ux .auth-btn-wrapper .authorize');
    await page.click('.modal-ux .btn-done');
    const operation = page.locator('#operations-Categories-createCategory');
    await operation.locator('.try-out__btn').click();
    await operation.locator('.execute').click();
    const status = operation.locator('.live-responses-table .response .response-col_status');
    await status.first().waitFor({ timeout: DEADLINE_MS });
    assert.equal((await status.first().innerText()).trim(), '201');
    const categories = (await tenant.request({ method: 'GET', url: '/api/v1/categories' })).json() as { categories: { name: string }[] };
    assert.deepEqual(categories.categories.map((category) => category.name), ['Plumbing']);
    await page.close();
  });

  it('opens a problem’s documentationUrl at its code’s section of the page of error codes, with nothing refused by its security policy', async () => {
    const problem = (await t.app.inject({ method: 'GET', url: '/api/v1/records' })).json() as { code: string; documentationUrl: string };
    assert.equal(problem.documentationUrl, `http://127.0.0.1:${port}/docs/errors#unauthenticated`);
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    assert.equal((await page.goto(problem.documentationUrl))?.status(), 200);
    assert.equal(await page.evaluate(() => document.querySelector(':target')?.id), 'unauthenticated');
    // The page's own stylesheet applies (its hash is in the policy): the targeted section is highlighted.
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector(':target')!).backgroundColor), 'rgb(255, 248, 219)');
    assert.deepEqual(violations, []);
    await page.close();
  });
});
