import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { axeViolations } from '../helpers/axe.js';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, type TestApp } from '../helpers/test-app.js';
import { sampleFiles } from '../helpers/files.js';

const CHROMIUM = '/usr/bin/chromium';

for (const dialect of TEST_DIALECTS) {
  describe(`the /verify page (${dialect})`, () => {
    let t: TestApp;
    let browser: Browser;
    let baseUrl: string;
    let bundleText: string;
    let evidenceBundleText: string;
    const photo = sampleFiles.jpeg(300 * 1024);

    before(async () => {
      t = await startTestApp(dialect);
      baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      const id = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignee: 'Bob' }) })).json().id as string;
      await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} });
      await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/complete`, payload: { resolutionNotes: 'Fixed' } });
      const withEvidence = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignee: 'Bob' }) })).json().id as string;
      await tenant.request({ method: 'POST', url: `/api/v1/records/${withEvidence}/start`, payload: {} });
      const attached = await tenant.request({ method: 'POST', url: `/api/v1/records/${withEvidence}/attachments?filename=after.jpg`, headers: { 'content-type': 'image/jpeg' }, payload: photo });
      const evidence = [{ attachmentId: attached.json().id }];
      await tenant.request({ method: 'POST', url: `/api/v1/records/${withEvidence}/complete`, payload: { resolutionNotes: 'Fixed', evidence } });
      await t.context.proofs.log.sealPending();
      bundleText = (await tenant.request({ method: 'GET', url: `/api/v1/records/${id}/proof` })).body;
      evidenceBundleText = (await tenant.request({ method: 'GET', url: `/api/v1/records/${withEvidence}/proof` })).body;
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking'] });
    });
    after(async () => {
      await browser?.close();
      await t.close();
    });

    /** Pastes a bundle, clicks Verify and returns the verdict plus every request made meanwhile. */
    async function verifyIn(page: Page, text: string): Promise<{ headline: string; requests: string[] }> {
      const requests: string[] = [];
      const onRequest = (request: { url(): string }) => requests.push(request.url());
      page.on('request', onRequest);
      await page.fill('#bundle', text);
      await page.click('#verify');
      await page.waitForSelector('#result[data-state="done"]');
      const headline = (await page.textContent('#result-headline')) ?? '';
      page.off('request', onRequest);
      await page.evaluate(() => {
        document.getElementById('result')!.dataset.state = 'idle';
      });
      return { headline, requests };
    }

    it('verifies a pasted bundle in the browser without any request to the server, and names the reason for a tampered one', async () => {
      const page = await browser.newPage();
      const response = await page.goto(`${baseUrl}/verify`);
      assert.equal(response?.status(), 200);
      assert.match(String(response?.headers()['content-security-policy']), /script-src 'self'.*connect-src 'none'/);
      await page.waitForFunction(() => document.getElementById('reasons')!.textContent !== '');

      const valid = await verifyIn(page, bundleText);
      assert.equal(valid.headline, 'valid');
      assert.deepEqual(valid.requests, []);

      const bundle = JSON.parse(bundleText) as { leafIndex: number; treeSize: number; checkpoint: string };
      const wrongSize = await verifyIn(page, JSON.stringify({ ...bundle, treeSize: bundle.treeSize + 1 }));
      assert.equal(wrongSize.headline, 'invalid: tree_size_mismatch');
      const alteredCheckpoint = await verifyIn(page, JSON.stringify({ ...bundle, checkpoint: bundle.checkpoint.replace(/\n(\d+)\n/, (_m, n: string) => `\n${Number(n) + 1}\n`) }));
      assert.equal(alteredCheckpoint.headline, 'invalid: checkpoint_signature_invalid');
      const notJson = await verifyIn(page, '{ nope');
      assert.equal(notJson.headline, 'invalid: input_not_json');
      assert.deepEqual([...wrongSize.requests, ...alteredCheckpoint.requests, ...notJson.requests], []);
      await page.close();
    });

    it('checks a bundle dropped as a file the same way', async () => {
      const page = await browser.newPage();
      await page.goto(`${baseUrl}/verify`);
      await page.setInputFiles('#bundle-file', { name: 'bundle.json', mimeType: 'application/json', buffer: Buffer.from(bundleText) });
      await page.waitForFunction(() => (document.getElementById('bundle') as HTMLTextAreaElement).value.length > 0);
      await page.click('#verify');
      await page.waitForSelector('#result[data-state="done"]');
      assert.equal(await page.textContent('#result-headline'), 'valid');
      await page.close();
    });

    it('passes axe-core before and after a check: every control labelled, the content in a main landmark', async () => {
      const page = await browser.newPage();
      const response = await page.goto(`${baseUrl}/verify`);
      assert.doesNotMatch(String(response?.headers()['content-security-policy']), /upgrade-insecure-requests/);
      assert.deepEqual(await axeViolations(page), []);
      await page.getByLabel('Or open a bundle file').setInputFiles({ name: 'bundle.json', mimeType: 'application/json', buffer: Buffer.from(bundleText) });
      await page.waitForFunction(() => (document.getElementById('bundle') as HTMLTextAreaElement).value.length > 0);
      await page.click('#verify');
      await page.waitForSelector('#result[data-state="done"]');
      assert.deepEqual(await axeViolations(page), []);
      await page.close();
    });

    it('checks chosen files against the proof’s evidence in the browser without sending them, and labels every input', async () => {
      const page = await browser.newPage();
      const requests: string[] = [];
      await page.goto(`${baseUrl}/verify`);
      await page.waitForFunction(() => document.getElementById('reasons')!.textContent !== '');
      const unlabelled = await page.evaluate(() =>
        Array.from(document.querySelectorAll('input, textarea')).filter((input) => (input as HTMLInputElement).labels?.length === 0).map((input) => input.id),
      );
      assert.deepEqual(unlabelled, []);
      page.on('request', (request) => requests.push(request.url()));
      await page.fill('#bundle', evidenceBundleText);
      await page.setInputFiles('#evidence-files', [
        { name: 'photo.jpg', mimeType: 'image/jpeg', buffer: photo },
        { name: 'other.jpg', mimeType: 'image/jpeg', buffer: sampleFiles.jpeg() },
      ]);
      await page.click('#verify');
      await page.waitForSelector('#result[data-state="done"]');
      // One file is not evidence: the verdict is invalid, as the CLI's and the SDK's are.
      assert.equal(await page.textContent('#result-headline'), 'invalid: not_evidence');
      assert.equal(await page.getAttribute('#result', 'data-valid'), 'false');
      const lines = await page.$$eval('#evidence-result li', (items) => items.map((item) => [(item as HTMLElement).dataset.evidence, item.textContent]));
      assert.equal(lines.length, 2);
      assert.equal(lines[0]![0], 'true');
      assert.match(String(lines[0]![1]), /^evidence: photo\.jpg is "after\.jpg" \(image\/jpeg\)/);
      assert.equal(lines[1]![0], 'false');
      assert.match(String(lines[1]![1]), /^not evidence: other\.jpg \(\d+ bytes, sha256 [0-9a-f]{64}\) is none of the 1 files the proof names$/);
      assert.deepEqual(requests, []);
      await page.close();
    });
  });
}
