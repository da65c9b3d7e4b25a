// The three verifiers (the SDK's verifyProof(), `wo proof verify` and the /verify page) give one
// verdict, in the same words, on the same bundle and files: the page in a real Chromium, the CLI as
// a child process, the SDK in this process.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { verifyProof } from '@work-order-api/client';
import { TEST_DIALECTS } from '../../test/helpers/databases.js';
import { sampleFiles } from '../../test/helpers/files.js';
import { recordBody, seedCategory, startTestApp, type TestApp } from '../../test/helpers/test-app.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TSX_LOADER = import.meta.resolve('tsx');

interface Words {
  valid: boolean;
  /** `valid` or `invalid: <reason>`, then the detail, as the CLI's first line puts them. */
  line: string;
  /** Who reported the completion (empty when the proof did not verify). */
  completion: string;
  files: string[];
}

interface Case {
  name: string;
  bundle: string;
  files: { name: string; bytes: Buffer }[];
  expect: { valid: boolean; headline: string };
}

for (const dialect of TEST_DIALECTS) {
  describe(`one verdict from the SDK, the CLI and the /verify page (${dialect})`, () => {
    let t: TestApp;
    let browser: Browser;
    let baseUrl: string;
    let jwksText: string;
    let keyId: string;
    let outside: string;
    const cases: Case[] = [];
    const photo = sampleFiles.jpeg(200 * 1024);

    before(async () => {
      t = await startTestApp(dialect);
      baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
      const tenant = await t.newTenant();
      keyId = tenant.keyId;
      const categoryId = await seedCategory(tenant);
      const create = async () => (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignee: 'Bob Plumber' }) })).json().id as string;
      const plain = await create();
      await tenant.request({ method: 'POST', url: `/api/v1/records/${plain}/start`, payload: {} });
      await tenant.request({ method: 'POST', url: `/api/v1/records/${plain}/complete`, payload: { resolutionNotes: 'Fixed' } });
      const withEvidence = await create();
      await tenant.request({ method: 'POST', url: `/api/v1/records/${withEvidence}/start`, payload: {} });
      const attached = await tenant.request({ method: 'POST', url: `/api/v1/records/${withEvidence}/attachments?filename=after.jpg`, headers: { 'content-type': 'image/jpeg' }, payload: photo });
      await tenant.request({ method: 'POST', url: `/api/v1/records/${withEvidence}/complete`, payload: { resolutionNotes: 'Fixed', evidence: [{ attachmentId: attached.json().id }] } });
      await t.context.proofs.log.sealPending();
      const bundle = (await tenant.request({ method: 'GET', url: `/api/v1/records/${plain}/proof` })).body;
      const evidenceBundle = (await tenant.request({ method: 'GET', url: `/api/v1/records/${withEvidence}/proof` })).body;
      jwksText = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).body;
      const parsed = JSON.parse(bundle) as { leafIndex: number };
      cases.push(
        { name: 'a valid proof', bundle, files: [], expect: { valid: true, headline: 'valid' } },
        { name: 'a valid proof with its evidence file', bundle: evidenceBundle, files: [{ name: 'photo.jpg', bytes: photo }], expect: { valid: true, headline: 'valid' } },
        {
          name: 'a valid proof with a file that is not its evidence',
          bundle: evidenceBundle,
          files: [{ name: 'photo.jpg', bytes: photo }, { name: 'other.jpg', bytes: sampleFiles.jpeg() }],
          expect: { valid: false, headline: 'invalid: not_evidence' },
        },
        { name: 'a tampered proof', bundle: JSON.stringify({ ...parsed, leafIndex: parsed.leafIndex + 1 }), files: [], expect: { valid: false, headline: 'invalid: leaf_not_in_tree' } },
      );
      outside = mkdtempSync(path.join(tmpdir(), 'wo-verdicts-'));
      writeFileSync(path.join(outside, 'jwks.json'), jwksText);
      browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking'] });
    });
    after(async () => {
      await browser?.close();
      await t.close();
      rmSync(outside, { recursive: true, force: true });
    });

    async function onThePage(check: Case): Promise<Words> {
      const page = await browser.newPage();
      try {
        await page.goto(`${baseUrl}/verify`);
        await page.fill('#bundle', check.bundle);
        if (check.files.length > 0) await page.setInputFiles('#evidence-files', check.files.map((file) => ({ name: file.name, mimeType: 'image/jpeg', buffer: file.bytes })));
        await page.click('#verify');
        await page.waitForSelector('#result[data-state="done"]');
        const [headline, detail, completion, valid] = await Promise.all([
          page.textContent('#result-headline'),
          page.textContent('#result-detail'),
          page.textContent('#result-completion'),
          page.getAttribute('#result', 'data-valid'),
        ]);
        const files = await page.$$eval('#evidence-result li', (items) => items.map((item) => item.textContent ?? ''));
        return { valid: valid === 'true', line: `${headline}: ${detail}`, completion: completion ?? '', files };
      } finally {
        await page.close();
      }
    }

    /** `wo proof verify` in the files' folder, so that it names them as the page and the SDK do. */
    function inTheCli(check: Case): Words & { exit: number | null; json: { valid: boolean; reason?: string; detail?: string } } {
      writeFileSync(path.join(outside, 'bundle.json'), check.bundle);
      for (const file of check.files) writeFileSync(path.join(outside, file.name), file.bytes);
      const fileArgs = check.files.flatMap((file) => ['--file', file.name]);
      const run = (...extra: string[]) =>
        spawnSync(process.execPath, ['--import', TSX_LOADER, path.join(repoRoot, 'src/main.ts'), 'proof', 'verify', 'bundle.json', '--keys', 'jwks.json', ...fileArgs, ...extra], {
          cwd: outside,
          encoding: 'utf8',
          env: { ...process.env, WO_DATA_DIR: path.join(outside, 'no-data'), LOG_LEVEL: 'silent' },
        });
      const text = run();
      const json = run('--json');
      assert.equal(json.status, text.status, json.stderr);
      const [line = '', ...rest] = text.stdout.trimEnd().split('\n');
      const completion = /^Work order \S+ was reported completed/.test(rest[0] ?? '') ? rest.shift()! : '';
      return { exit: text.status, valid: text.status === 0, line, completion, files: rest, json: JSON.parse(json.stdout) };
    }

    it('agrees on a valid proof, one with its evidence, one with a file that is not evidence, and a tampered one', async () => {
      for (const check of cases) {
        const page = await onThePage(check);
        const cli = inTheCli(check);
        const sdk = await verifyProof(JSON.parse(check.bundle), JSON.parse(jwksText), { files: check.files.map((file) => ({ name: file.name, bytes: new Uint8Array(file.bytes) })) });

        assert.equal(page.valid, check.expect.valid, `${check.name}: page`);
        assert.equal(cli.exit, check.expect.valid ? 0 : 1, `${check.name}: CLI exit status ${cli.exit}`);
        assert.equal(cli.json.valid, check.expect.valid, `${check.name}: CLI --json`);
        assert.equal(sdk.valid, check.expect.valid, `${check.name}: SDK`);
        assert.ok(page.line.startsWith(`${check.expect.headline}: `), `${check.name}: ${page.line}`);
        // The same words: the CLI's first line is the page's headline and detail.
        assert.equal(cli.line, page.line, check.name);
        assert.equal(cli.completion, page.completion, check.name);
        assert.deepEqual(cli.files, page.files, check.name);
        if (!sdk.valid) {
          assert.equal(`invalid: ${sdk.reason}: ${sdk.detail}`, page.line, `${check.name}: SDK`);
          assert.equal(cli.json.reason, sdk.reason);
          assert.equal(cli.json.detail, sdk.detail);
        } else {
          assert.equal(page.line, `valid: proof ${sdk.proofId} of work order ${sdk.recordId}, leaf ${sdk.leafIndex} of ${sdk.treeSize} in ${sdk.logOrigin}`);
        }
        if (check.expect.headline !== 'invalid: leaf_not_in_tree') {
          // The actor is the key that reported the completion; the assignee is only named as such.
          assert.match(page.completion, new RegExp(`was reported completed at \\S+ by api_key:${keyId} \\(who reported it; a proof does not show who did the work\\)\\. The work order named "Bob Plumber" as assignee\\.$`));
        } else {
          assert.equal(page.completion, '');
        }
        assert.equal(page.files.length, check.files.length);
      }
    });

    it('links to the docs and the keys with real links that answer', async () => {
      const page = await browser.newPage();
      await page.goto(`${baseUrl}/verify`);
      const hrefs = await page.$$eval('main a[href]', (links) => links.map((link) => link.getAttribute('href')!));
      assert.ok(hrefs.includes('/verify/proofs.md') && hrefs.includes('/.well-known/jwks.json') && hrefs.includes('/docs'), hrefs.join(', '));
      assert.doesNotMatch((await page.textContent('main')) ?? '', /See docs\/proofs\.md/);
      for (const href of hrefs) assert.equal((await fetch(new URL(href, baseUrl), { redirect: 'follow' })).status, 200, href);
      const doc = await fetch(new URL('/verify/proofs.md', baseUrl));
      assert.match(await doc.text(), /^# Completion proofs/);
      await page.close();
    });
  });
}
