import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const CHROMIUM = '/usr/bin/chromium';

describe('the /docs API reference in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;

  before(async () => {
    t = await startTestApp('sqlite');
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking'] });
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  it('renders every operation of the OpenAPI document, with nothing refused by its security policy', async () => {
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
    const response = await page.goto(`${baseUrl}/docs/`);
    assert.equal(response?.status(), 200);
    await page.waitForFunction((count) => document.querySelectorAll('.opblock').length >= count, operations, { timeout: 15_000 }).catch(async (error: unknown) => {
      throw new Error(`${String(error)}; rendered ${await page.evaluate(() => document.querySelectorAll('.opblock').length)} of ${operations}`);
    });
    assert.deepEqual(violations, []);
    assert.deepEqual(failed, []);
  });
});
