import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { spawnWo } from '../helpers/child-processes.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { verdictOf, verdictWords, verifyBundle } from '../../src/proofs/verify.js';
import { witnessVectors, type WitnessVectors } from './witness-vectors.js';

const CHROMIUM = '/usr/bin/chromium';

/** The same vectors through the three verifiers, which must give the same words. */
describe('verdicts on witnessed proofs: the verifier, `wo proof verify --policy` and the /verify page agree', () => {
  let v: WitnessVectors;
  let dir: string;

  before(() => {
    v = witnessVectors();
    dir = mkdtempSync(path.join(tmpdir(), 'wo-witness-verdicts-'));
    writeFileSync(path.join(dir, 'jwks.json'), JSON.stringify(v.jwks));
    writeFileSync(path.join(dir, 'policy.txt'), v.policy);
  });
  after(() => {
    v.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('verifyBundle with the policy gives each vector its verdict', async () => {
    for (const vector of v.vectors) {
      const { headline, detail } = verdictWords(verdictOf(await verifyBundle(vector.bundle, v.jwks, { policy: v.policy }), []));
      assert.match(`${headline}: ${detail}`, vector.expected, vector.name);
    }
    // Without a policy, an old bundle and a witnessed one verify as they always did.
    assert.equal((await verifyBundle(v.oldBundle, v.jwks)).valid, true);
    assert.equal((await verifyBundle(v.vectors[0]!.bundle, v.jwks)).valid, true);
    const malformed = await verifyBundle(v.oldBundle, v.jwks, { policy: 'witness W1 nonsense\nquorum W1\n' });
    assert.equal(!malformed.valid && malformed.reason, 'policy_malformed');
  });

  it('`wo proof verify --policy` prints the same first line, exit 0 only for the valid ones', async () => {
    for (const [i, vector] of v.vectors.entries()) {
      const file = path.join(dir, `bundle-${i}.json`);
      writeFileSync(file, JSON.stringify(vector.bundle));
      const run = spawnWo(['proof', 'verify', file, '--keys', path.join(dir, 'jwks.json'), '--policy', path.join(dir, 'policy.txt')], { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' });
      const code = await run.exited;
      const first = run.stdout.split('\n')[0]!;
      assert.match(first, vector.expected, `${vector.name}: ${run.stdout}${run.stderr}`);
      assert.equal(code, first.startsWith('valid') ? 0 : 1, vector.name);
    }
  });

  describe('in headless Chromium', () => {
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

    it('the /verify page with the policy pasted gives each vector the same headline and detail, and makes no request', async () => {
      const page = await browser.newPage();
      const requests: string[] = [];
      await page.goto(`${baseUrl}/verify`);
      await page.waitForFunction(() => document.getElementById('reasons')!.textContent !== '');
      page.on('request', (request) => requests.push(request.url()));
      await page.fill('#keys', JSON.stringify(v.jwks));
      await page.fill('#policy', v.policy);
      for (const vector of v.vectors) {
        await page.fill('#bundle', JSON.stringify(vector.bundle));
        await page.click('#verify');
        await page.waitForSelector('#result[data-state="done"]');
        const words = `${await page.textContent('#result-headline')}: ${await page.textContent('#result-detail')}`;
        assert.match(words, vector.expected, vector.name);
        await page.evaluate(() => {
          document.getElementById('result')!.dataset.state = 'idle';
        });
      }
      // An empty policy field checks no witnesses: the old bundle is valid, as without --policy.
      await page.fill('#policy', '');
      await page.fill('#bundle', JSON.stringify(v.oldBundle));
      await page.click('#verify');
      await page.waitForSelector('#result[data-state="done"]');
      assert.equal(await page.textContent('#result-headline'), 'valid');
      assert.deepEqual(requests, []);
      await page.close();
    });
  });
});
